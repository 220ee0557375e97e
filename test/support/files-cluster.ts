// A files cluster on 127.0.0.1 for integration tests: each member has its own store directory (its HOME's store
// folder), HTTP port and libp2p port. Peer ids come from a first boot of each store (the identity is kept there,
// so the real start keeps it) and libp2p ports are picked before the start, so every member shares ONE `nodes`
// list. Inert on import (node --test runs every module under dist/test/).

import { join } from 'node:path';
import { NodeHolder } from '../../actors/files/node.js';
import { startFilesNode, stopFilesNode } from '../../actors/files/runtime.actor.js';
import { freePort } from './cli.js';
import { startTestFilesNode, type TestFilesNode, type TestFilesNodeOptions } from './files-node.js';
import { captureLogger } from './logger.js';

export const CLUSTER_KEY = '3b9d5f7a1c2e4086b8d0f2a4c6e8a0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4';

export interface ClusterMember {
  readonly name: string;
  readonly storeDirectory: string;
  readonly peerId: string;
  readonly p2pPort: number;
  readonly multiAddr: string;
}

/** The peer id a store gets on its first boot (kept in the store, so a later start keeps it). */
export async function firstBootPeerId(storeDirectory: string): Promise<string> {
  const node = await startFilesNode({ storeDirectory, listen: ['/ip4/127.0.0.1/tcp/0'], allow: [], holder: new NodeHolder(), logger: captureLogger('warn').logger });
  const peerId = node.peerId;
  await stopFilesNode(node);
  return peerId;
}

/** Identities and addresses of `names`, each under `<home>/<name>`. */
export async function planCluster(home: string, names: readonly string[]): Promise<ClusterMember[]> {
  const members: ClusterMember[] = [];
  for (const name of names) {
    const storeDirectory = join(home, name);
    const peerId = await firstBootPeerId(storeDirectory);
    const p2pPort = await freePort();
    members.push({ name, storeDirectory, peerId, p2pPort, multiAddr: `/ip4/127.0.0.1/tcp/${p2pPort}/p2p/${peerId}` });
  }
  return members;
}

/** The `nodes` list naming `members`. */
export function nodesOf(members: readonly ClusterMember[]): Array<{ name: string; multiAddr: string }> {
  return members.map((member) => ({ name: member.name, multiAddr: member.multiAddr }));
}

/**
 * Starts `member` with `nodes` (default: every member) and `layers` over the cluster defaults: fast checkpoints,
 * the admin key, scheduled repair and collection far away (tests trigger them), peering every few seconds.
 */
export function startMember(
  member: ClusterMember,
  nodes: ReadonlyArray<{ name: string; multiAddr: string }>,
  layers: ReadonlyArray<Record<string, unknown>> = [],
  options: TestFilesNodeOptions = {},
): Promise<TestFilesNode> {
  return startTestFilesNode(
    member.storeDirectory,
    [
      {
        adminApiKey: CLUSTER_KEY,
        nodes,
        peerDiscovery: { listen: [`/ip4/127.0.0.1/tcp/${member.p2pPort}`] },
        peeringSchedule: '*/2 * * * * *',
        replication: { repairSchedule: '0 0 0 1 1 *', requestTimeoutMs: 10_000 },
        storage: { gc: { schedule: '0 0 0 1 1 *' } },
        health: { checkpointIntervalMs: 1_000, maxCheckpointAgeMs: 5_000, storageMaxAgeMs: 5_000, requiredPeerCount: 0 },
        diskUsageScanPeriod: '* * * * * *',
      },
      ...layers,
    ],
    { peering: { dialTimeoutMs: 2_000, startupBoundMs: 3_000 }, ...options },
  );
}

/** An HTTP call to a member; the body is parsed JSON when it is JSON. */
export async function call(node: TestFilesNode, method: 'GET' | 'POST', path: string, init: { key?: boolean; body?: FormData } = {}) {
  const response = await fetch(`http://127.0.0.1:${node.port}${path}`, {
    method,
    headers: init.key === false ? {} : { 'x-api-key': CLUSTER_KEY },
    body: init.body,
  });
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body, text };
}

/** Uploads one file named `name` with `bytes`. */
export function upload(node: TestFilesNode, name: string, bytes: Uint8Array) {
  const form = new FormData();
  form.append('files', new Blob([Buffer.from(bytes)]), name);
  return call(node, 'POST', '/api/file/upload', { body: form, key: false });
}

/** Polls `check` every 200 ms until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
