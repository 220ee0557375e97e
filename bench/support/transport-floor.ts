// The cluster bench's transport floor: what moving one copy costs over the files node's own libp2p stack (TCP +
// noise + yamux, `connectionStack()` of actors/files/runtime.actor.ts) when nothing of the node is around it. A
// server process reads block files whole and sends them on one stream; a pulling process gathers the stream back
// into 1 MiB blocks, hashes each (sha2-256, as a replica checks a block against its CID) and writes it under a
// temporary name then renames it (as blockstore-fs writes a block file). No registry, no pins, no DAG, no verifier.
// A replica cannot do less than this, so the bench prints the floor it gives the replicated upload's ratio.
//
//   node transport-floor.js serve <blocks dir>       prints its listen address, then serves every stream
//   node transport-floor.js pull <address> <out dir> pulls one copy, prints {"bytes","wallMs","cpuMs"} and exits
//
// Started by the bench with an IPC channel (exitWithParent): neither outlives it.

import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import { connectionStack } from '../../actors/files/runtime.actor.js';
import { exitWithParent } from './processes.js';

export const FLOOR_PROTOCOL = '/adm-bench/transport-floor/1.0.0';
const BLOCK_BYTES = 1_048_576;
/** Blocks written at once by the pulling side, and read ahead by the server (as the block pull does). */
const IN_FLIGHT = 4;

async function serve(blocksDir: string): Promise<void> {
  const files = readdirSync(blocksDir).sort().map((name) => join(blocksDir, name));
  const node = await createLibp2p({ addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] }, ...connectionStack() });
  await node.handle(
    FLOOR_PROTOCOL,
    async (stream) => {
      const reads = files.slice(0, IN_FLIGHT).map((file) => readFile(file));
      for (let index = 0; index < files.length; index++) {
        const block = await reads[index]!;
        if (index + IN_FLIGHT < files.length) reads.push(readFile(files[index + IN_FLIGHT]!));
        if (!stream.send(block)) await stream.onDrain();
      }
      await stream.close();
    },
    { maxInboundStreams: 8 },
  );
  process.stdout.write(`${node.getMultiaddrs()[0]!.toString()}\n`);
}

async function pull(address: string, outDir: string): Promise<void> {
  const node = await createLibp2p({ ...connectionStack() });
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const stream = await node.dialProtocol(multiaddr(address), FLOOR_PROTOCOL);
  // A few reused block bodies, as the block pull reuses leaf bodies (fresh 1 MiB buffers page-fault on every copy).
  const bodies = Array.from({ length: IN_FLIGHT + 1 }, () => Buffer.allocUnsafeSlow(BLOCK_BYTES));
  const writes: Array<Promise<void>> = [];
  let body = bodies[0]!;
  let filled = 0;
  let blocks = 0;
  let bytes = 0;
  const store = async (block: Buffer) => {
    const name = join(outDir, `${createHash('sha256').update(block).digest('hex')}.data`);
    await writeFile(`${name}.tmp`, block);
    await rename(`${name}.tmp`, name);
  };
  const finishBlock = async () => {
    writes.push(store(body.subarray(0, filled)));
    blocks++;
    if (writes.length >= IN_FLIGHT) await writes.shift();
    body = bodies[blocks % bodies.length]!;
    filled = 0;
  };
  for await (const received of stream) {
    const piece = received instanceof Uint8Array ? received : received.subarray();
    bytes += piece.byteLength;
    let offset = 0;
    while (offset < piece.byteLength) {
      const take = Math.min(BLOCK_BYTES - filled, piece.byteLength - offset);
      body.set(piece.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
      if (filled === BLOCK_BYTES) await finishBlock();
    }
  }
  if (filled > 0) await finishBlock();
  await Promise.all(writes);
  const cpu = process.cpuUsage(cpuBefore);
  process.stdout.write(`${JSON.stringify({ bytes, wallMs: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
  await node.stop();
}

exitWithParent('transport-floor.js');
const [role, first, second] = process.argv.slice(2);
if (role === 'serve' && first) await serve(first);
else if (role === 'pull' && first && second) {
  await pull(first, second);
  process.exit(0);
} else {
  process.stderr.write('usage: transport-floor.js serve <blocks dir> | pull <address> <out dir>\n');
  process.exit(2);
}
