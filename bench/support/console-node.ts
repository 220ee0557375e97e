// The fake ADAMANT node of the console benchmark, in its own process (started by bench/console.bench.ts with an IPC
// channel, like bench/support/transfers-server.ts), so its CPU is its own and the load generator's process does
// nothing else. It is the tests' fake node (test/support/adamant-node.ts) unchanged: the bench measures the same
// node calls directly against it and through the console server.
//
// The fake node records every request it receives; here they are counted by path and dropped every
// COUNT_INTERVAL_MS, so a long run keeps a flat heap, and the bench can ask how many node calls a run caused.
//
// Protocol: the parent sends one `ConsoleNodeSetup`; this process answers `{ kind: 'ready', port }` once it listens
// (or `{ kind: 'failed', error }`). Afterwards each `{ kind: 'counts' }` is answered with the requests per path since
// the last one. It exits on SIGTERM/SIGINT or when the parent goes away.

import type { FakeAdamantNode } from '../../test/support/adamant-node.js';
import { exitWithParent } from './processes.js';

export interface ConsoleNodeSetup {
  readonly kind: 'setup';
  readonly height: number;
}

export type ConsoleNodeAnswer =
  | { readonly kind: 'ready'; readonly port: number }
  | { readonly kind: 'failed'; readonly error: string }
  | { readonly kind: 'counts'; readonly counts: Readonly<Record<string, number>> };

const COUNT_INTERVAL_MS = 250;

let node: FakeAdamantNode | undefined;
let counts: Record<string, number> = {};

function drain(): void {
  if (node === undefined) return;
  for (const request of node.requests) counts[request.path] = (counts[request.path] ?? 0) + 1;
  node.requests.length = 0;
}

async function start(setup: ConsoleNodeSetup): Promise<number> {
  const { startFakeAdamantNode } = await import('../../test/support/adamant-node.js');
  node = await startFakeAdamantNode({ height: setup.height });
  setInterval(drain, COUNT_INTERVAL_MS).unref();
  return Number(new URL(node.url).port);
}

exitWithParent('console-node.js');
process.on('message', (message: ConsoleNodeSetup | { readonly kind: 'counts' }) => {
  if (message.kind === 'counts') {
    drain();
    process.send!({ kind: 'counts', counts } satisfies ConsoleNodeAnswer);
    counts = {};
    return;
  }
  start(message).then(
    (port) => process.send!({ kind: 'ready', port } satisfies ConsoleNodeAnswer),
    (error: unknown) => {
      process.send!({ kind: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies ConsoleNodeAnswer);
      process.exit(1);
    },
  );
});
