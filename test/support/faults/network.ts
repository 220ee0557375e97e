// The fault harness's network (issue 29): every files node in its own network namespace, on two bridges this module
// creates and deletes. Inert on import (node --test runs every module under dist/test/).
//
//   cluster bridge  admf-<id>-c   10.200.<n>.0/24  libp2p between the nodes; the faults act here. The host has .254 on
//                                                   it only for the TCP fault proxy (fault-proxy.ts) between two nodes.
//   control bridge  admf-<id>-k   10.201.<n>.0/24  the harness's own HTTP calls (uploads, health, status); never
//                                                   faulted, so a node cut off from its peers still answers the driver.
//
// Node i (0-based) is .<i+1> on both; inside its namespace the links are `clu0` and `ctl0`. Nothing here touches
// the host's own interfaces, routes or firewall: addresses only on the two bridges, routes and nftables rules only
// inside the nodes' namespaces.
//
// Names carry the owning process's pid (base 36) so that a harness that died without cleaning up is swept by the next
// one (`sweepLeftovers`), while another harness running at the same time on this machine is left alone.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';

export const FAULT_PREFIX = 'admf';
const OWNER = process.pid.toString(36);
const IP_CANDIDATES = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'];
const NFT_CANDIDATES = ['/usr/sbin/nft', '/sbin/nft', '/usr/bin/nft'];

export const ipBinary = (): string | undefined => IP_CANDIDATES.find((path) => existsSync(path));
export const nftBinary = (): string | undefined => NFT_CANDIDATES.find((path) => existsSync(path));

function run(command: string, args: readonly string[], options: { ignoreFailure?: boolean } = {}): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });
  } catch (error) {
    if (options.ignoreFailure) return '';
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`${command} ${args.join(' ')} failed: ${stderr || (error as Error).message}`);
  }
}

const ip = (...args: string[]) => run(ipBinary() ?? 'ip', args);
const ipQuiet = (...args: string[]) => run(ipBinary() ?? 'ip', args, { ignoreFailure: true });

/**
 * Why network namespaces cannot be used here, or undefined when they can: root, iproute2's `ip`, and a namespace
 * that can actually be created (a container may forbid it).
 */
export function netnsUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'network namespaces need root (this process is not uid 0)';
  if (!ipBinary()) return "iproute2's `ip` is not installed";
  const probe = `${FAULT_PREFIX}-${OWNER}-probe`;
  try {
    ip('netns', 'add', probe);
  } catch (error) {
    return `\`ip netns add\` failed: ${(error as Error).message}`;
  } finally {
    ipQuiet('netns', 'del', probe);
  }
  return undefined;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The owner pid a harness name carries (`admf-<pid36>-…`), or undefined for a name that is not ours. */
export function ownerOf(name: string): number | undefined {
  const match = new RegExp(`^${FAULT_PREFIX}-([0-9a-z]{1,7})-`).exec(name);
  if (!match) return undefined;
  const pid = parseInt(match[1]!, 36);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Deletes what a harness that is gone left behind: namespaces and links named `admf-<pid>-…` whose pid is not alive,
 * and the tmpfs mounts under run folders named the same way (fault-nodes.ts mounts one per node). Returns what it
 * removed, so the caller can say so.
 */
export function sweepLeftovers(): string[] {
  const removed: string[] = [];
  const stale = (name: string) => {
    const owner = ownerOf(name);
    return owner !== undefined && owner !== process.pid && !alive(owner);
  };
  for (const line of ipQuiet('netns', 'list').split('\n')) {
    const name = line.trim().split(/\s+/)[0];
    if (name && stale(name)) {
      // Nodes a dead harness left running inside: they are that harness's, and would outlive the namespace's name.
      for (const pid of ipQuiet('netns', 'pids', name).split(/\s+/).filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
          removed.push(`process ${pid} in ${name}`);
        } catch {
          // Gone meanwhile.
        }
      }
      ipQuiet('netns', 'del', name);
      removed.push(`netns ${name}`);
    }
  }
  for (const line of ipQuiet('-o', 'link', 'show').split('\n')) {
    const name = /^\d+:\s+([^:@\s]+)/.exec(line)?.[1];
    if (name && stale(name)) {
      ipQuiet('link', 'del', name);
      removed.push(`link ${name}`);
    }
  }
  const mounts = existsSync('/proc/mounts') ? readFileSync('/proc/mounts', 'utf8').split('\n') : [];
  const runDirs = new Set<string>();
  for (const line of mounts) {
    const point = line.split(' ')[1];
    const folder = point ? /\/(admf-[0-9a-z]+-[^/]+)\//.exec(`${point}/`) : null;
    if (!point || !folder || !stale(folder[1]!)) continue;
    run('umount', ['-l', point], { ignoreFailure: true });
    removed.push(`mount ${point}`);
    runDirs.add(point.slice(0, point.indexOf(folder[1]!) + folder[1]!.length));
  }
  for (const dir of runDirs) rmSync(dir, { recursive: true, force: true });
  return removed;
}

export interface NetNode {
  readonly index: number;
  readonly name: string;
  readonly namespace: string;
  /** Address on the cluster bridge (libp2p). */
  readonly clusterIp: string;
  /** Address on the control bridge (the harness's HTTP calls). */
  readonly controlIp: string;
  /** Host side of the node's cluster link: the partition fault sets it down. */
  readonly hostLink: string;
}

/** A third octet no address of this machine uses yet in either subnet (another harness may be running). */
function freeOctet(): number {
  const used = ipQuiet('-o', '-4', 'addr', 'show');
  for (let step = 0; step < 200; step++) {
    const octet = ((process.pid + step) % 200) + 20;
    if (!used.includes(`10.200.${octet}.`) && !used.includes(`10.201.${octet}.`)) return octet;
  }
  throw new Error('no free 10.200.x.0/24 and 10.201.x.0/24 pair for the fault network');
}

/**
 * The namespaces, links and bridges of one run. `destroy()` deletes all of them (also after a failed `create`);
 * every fault this class applies is removed with them.
 */
export class FaultNetwork {
  readonly nodes: NetNode[] = [];
  readonly octet: number;
  /** The host's address on the cluster bridge (where the fault proxy listens). */
  readonly hostClusterIp: string;
  readonly hostControlIp: string;
  readonly #clusterBridge: string;
  readonly #controlBridge: string;
  readonly #created: Array<{ kind: 'netns' | 'link'; name: string }> = [];
  readonly #nftTables = new Set<string>();
  #destroyed = false;

  private constructor(octet: number) {
    this.octet = octet;
    this.hostClusterIp = `10.200.${octet}.254`;
    this.hostControlIp = `10.201.${octet}.254`;
    this.#clusterBridge = `${FAULT_PREFIX}-${OWNER}-c`;
    this.#controlBridge = `${FAULT_PREFIX}-${OWNER}-k`;
  }

  /** Creates the bridges and one namespace per name (at most 9 nodes: link names stay within 15 characters). */
  static create(names: readonly string[]): FaultNetwork {
    if (names.length > 9) throw new Error('at most 9 nodes');
    const network = new FaultNetwork(freeOctet());
    try {
      network.#build(names);
    } catch (error) {
      network.destroy();
      throw error;
    }
    return network;
  }

  #build(names: readonly string[]): void {
    for (const [bridge, hostIp] of [
      [this.#clusterBridge, this.hostClusterIp],
      [this.#controlBridge, this.hostControlIp],
    ] as const) {
      ip('link', 'add', bridge, 'type', 'bridge');
      this.#created.push({ kind: 'link', name: bridge });
      ip('addr', 'add', `${hostIp}/24`, 'dev', bridge);
      ip('link', 'set', bridge, 'up');
    }
    names.forEach((name, index) => {
      const namespace = `${FAULT_PREFIX}-${OWNER}-${name}`;
      ip('netns', 'add', namespace);
      this.#created.push({ kind: 'netns', name: namespace });
      ip('-n', namespace, 'link', 'set', 'lo', 'up');
      const node: NetNode = {
        index,
        name,
        namespace,
        clusterIp: `10.200.${this.octet}.${index + 1}`,
        controlIp: `10.201.${this.octet}.${index + 1}`,
        hostLink: `${FAULT_PREFIX}-${OWNER}-c${index}`,
      };
      for (const [hostLink, inner, bridge, address] of [
        [node.hostLink, 'clu0', this.#clusterBridge, node.clusterIp],
        [`${FAULT_PREFIX}-${OWNER}-k${index}`, 'ctl0', this.#controlBridge, node.controlIp],
      ] as const) {
        ip('link', 'add', hostLink, 'type', 'veth', 'peer', 'name', inner, 'netns', namespace);
        this.#created.push({ kind: 'link', name: hostLink });
        ip('link', 'set', hostLink, 'master', bridge, 'up');
        ip('-n', namespace, 'addr', 'add', `${address}/24`, 'dev', inner);
        ip('-n', namespace, 'link', 'set', inner, 'up');
      }
      this.nodes.push(node);
    });
  }

  node(name: string): NetNode {
    const found = this.nodes.find((node) => node.name === name);
    if (!found) throw new Error(`no node ${name}`);
    return found;
  }

  /** Full partition: the host side of the node's cluster link goes down (its peers see silence, no reset). */
  linkDown(node: NetNode): void {
    ip('link', 'set', node.hostLink, 'down');
  }

  linkUp(node: NetNode): void {
    ip('link', 'set', node.hostLink, 'up');
  }

  /**
   * Routes inside `node`'s namespace that refuse traffic to `addresses` (`unreachable`: the kernel answers at once
   * with EHOSTUNREACH, as a router would with an ICMP error). Used both for splits and to keep a proxied pair from
   * talking directly.
   */
  refuseRoutes(node: NetNode, addresses: readonly string[], kind: 'unreachable' | 'blackhole' = 'unreachable'): void {
    for (const address of addresses) ip('-n', node.namespace, 'route', 'replace', kind, `${address}/32`);
  }

  clearRoutes(node: NetNode, addresses: readonly string[]): void {
    for (const address of addresses) ipQuiet('-n', node.namespace, 'route', 'del', `${address}/32`);
  }

  /**
   * One-way cut (nftables): packets `from` sends to `to` are dropped silently; what `to` sends still arrives. Throws
   * when nft is missing (callers check `nftBinary()` first and skip the fault loudly).
   */
  cutOneWay(from: NetNode, addresses: readonly string[]): void {
    const nft = nftBinary();
    if (!nft) throw new Error('nft is not installed');
    const table = `${FAULT_PREFIX}cut`;
    run(ipBinary()!, ['netns', 'exec', from.namespace, nft, 'add', 'table', 'inet', table]);
    run(ipBinary()!, ['netns', 'exec', from.namespace, nft, 'add', 'chain', 'inet', table, 'out', '{ type filter hook output priority 0; policy accept; }']);
    for (const address of addresses) run(ipBinary()!, ['netns', 'exec', from.namespace, nft, 'add', 'rule', 'inet', table, 'out', 'ip', 'daddr', address, 'drop']);
    this.#nftTables.add(from.namespace);
  }

  clearOneWay(from: NetNode): void {
    const nft = nftBinary();
    if (!nft || !this.#nftTables.has(from.namespace)) return;
    run(ipBinary()!, ['netns', 'exec', from.namespace, nft, 'delete', 'table', 'inet', `${FAULT_PREFIX}cut`], { ignoreFailure: true });
    this.#nftTables.delete(from.namespace);
  }

  /** argv that runs `argv` inside `node`'s namespace (`ip netns exec` execs it: the pid is the command's own). */
  execArgs(node: NetNode, argv: readonly string[]): { command: string; args: string[] } {
    return { command: ipBinary()!, args: ['netns', 'exec', node.namespace, ...argv] };
  }

  /** Deletes every namespace and link this run created (a namespace takes its rules, routes and veth ends along). */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    for (const { kind, name } of [...this.#created].reverse()) {
      if (kind === 'netns') ipQuiet('netns', 'del', name);
      else ipQuiet('link', 'del', name);
    }
  }

  /** What of this run still exists (for the cleanup test): names of namespaces and links. */
  leftovers(): string[] {
    const namespaces = ipQuiet('netns', 'list');
    const links = ipQuiet('-o', 'link', 'show');
    return this.#created.filter(({ kind, name }) => (kind === 'netns' ? namespaces.split(/\s/).includes(name) : links.includes(` ${name}:`) || links.includes(` ${name}@`))).map(({ name }) => name);
  }
}
