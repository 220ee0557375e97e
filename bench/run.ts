// `npm run bench -- <name> [options]`: runs one benchmark by name (docs/DESIGN.md "Testing": timing goals live
// here, as ratios against a baseline measured in the same run, never in tests).
//
// Exit codes: 0 when the benchmark ran (a missed goal is reported in its table, not as a failure),
// 1 when the benchmark itself failed, 2 for usage errors, 130 after SIGINT (143 after SIGTERM).

import { terminateLoadWorkers } from './support/load.js';
import { killAllTrackedNow } from './support/processes.js';
import { removeScratchDirs } from './support/scratch.js';

export interface BenchOptions {
  /** Seconds of measurement per load run (after warm-up). */
  readonly durationSeconds: number;
  /** Concurrent keep-alive connections of the throughput runs. */
  readonly connections: number;
  /** Sections to run (benchmark-specific names); empty = all. */
  readonly only: readonly string[];
  /** `--size`, for a bench that declares sizes (its first one when none is given); undefined otherwise. */
  readonly size?: string;
}

interface Bench {
  readonly description: string;
  readonly sections: readonly string[];
  /** Data sizes it can run at (`--size`), the default first; a bench without them refuses `--size`. */
  readonly sizes?: readonly string[];
  /** --duration when none is given (default 10). */
  readonly defaultDurationSeconds?: number;
  run(options: BenchOptions): Promise<void>;
}

const BENCHES: Readonly<Record<string, () => Promise<Bench>>> = {
  rates: async () => {
    const { RATES_SECTIONS, runRatesBench } = await import('./rates.bench.js');
    return { description: 'rates service: /get throughput vs a node:http baseline, /getHistory latency, merge pipeline', sections: RATES_SECTIONS, run: runRatesBench };
  },
  files: async () => {
    const { FILES_SECTIONS, runFilesBench } = await import('./files.bench.js');
    return {
      description: 'files node: 256 MiB uploads from disk (curl, node:http) and download vs in-process importer / unixfs.cat, small-file uploads vs an in-process node',
      sections: FILES_SECTIONS,
      run: runFilesBench,
    };
  },
  cluster: async () => {
    const { CLUSTER_SECTIONS, runClusterBench } = await import('./cluster.bench.js');
    return { description: 'files cluster: 64 MiB upload with 3 copies vs replication off, repair throughput after a node rejoins', sections: CLUSTER_SECTIONS, run: runClusterBench };
  },
  transfers: async () => {
    const { TRANSFERS_SECTIONS, runTransfersBench } = await import('./transfers.bench.js');
    return { description: 'transfers: gateway reads over 1,000,000 rows vs direct pg, indexer blocks/s on anvil with batched vs per-tx receipts', sections: TRANSFERS_SECTIONS, run: runTransfersBench };
  },
  console: async () => {
    const { CONSOLE_SECTIONS, runConsoleBench } = await import('./console.bench.js');
    return { description: 'console: JSON-RPC nodeHeight/getAddress through the server vs direct to the node at 32 connections, sendTokens signing tx/s', sections: CONSOLE_SECTIONS, run: runConsoleBench };
  },
  scale: async () => {
    const { SCALE_SECTIONS, SCALE_SIZES, runScaleBench } = await import('./scale.bench.js');
    return {
      description: 'growth tables: each store filled at several sizes through the storage layer, each operation measured per size (issue 30)',
      sections: SCALE_SECTIONS,
      sizes: SCALE_SIZES,
      run: runScaleBench,
    };
  },
  edge: async () => {
    const { EDGE_DEFAULT_DURATION_SECONDS, EDGE_SECTIONS, runEdgeBench } = await import('./edge.bench.js');
    return {
      description: 'HTTP edge: small JSON and a 1 MiB stream through HttpServer on uWS and on node:http vs bare node:http, 1 and 50 connections',
      sections: EDGE_SECTIONS,
      defaultDurationSeconds: EDGE_DEFAULT_DURATION_SECONDS,
      run: runEdgeBench,
    };
  },
};

const USAGE = `usage: npm run bench -- <name> [--duration SECONDS] [--connections N] [--only SECTION,...] [--size SIZE]

benchmarks:
  rates   /get throughput, latency and server CPU per request against a plain node:http baseline and a
          bare-uWS replay (skipped where uWS cannot load: Node 22, 24) (sections: get),
          /getHistory over 100,000 stored snapshots (history), the merge pipeline (merge)
  files   one running node: 256 MiB files written to disk, uploaded one after another by curl -F and by a
          node:http client streaming the file, each against the same file imported in-process: wall time, node
          CPU per MiB against the importer's, the node's peak RSS (upload); the download of the first one against
          unixfs.cat in-process, with time to first byte, and the node's peak RSS during 4 concurrent downloads
          (download); 200 uploads of 4 KiB files from 16 concurrent clients against the same files uploaded 16 at
          a time into an in-process node (import, pin, registry), files/s and CPU per upload (small).
          --duration and --connections do not apply
  cluster 3 files nodes on loopback: 64 MiB upload with 3 copies against the same upload on a node with
          replication off (upload); copies placed per second by POST /api/storage/repair for 1,000 small
          files after a stopped node rejoins (repair). --duration and --connections do not apply
  transfers on PostgreSQL with 1,000,000 generated rows: the three reads of spec A 4.1 (native history,
          token history, keyset next page) through the gateway against the same SQL direct through pg,
          p50/p99 at 1 connection and requests/s at 32 connections (queries); on anvil, 2,000 blocks of
          50 transfers indexed with batched receipts and with per-transaction receipts (indexer).
          --duration applies to the 32-connection runs; --connections does not apply
  console JSON-RPC nodeHeight and getAddress through the console server (the built CLI) against the same node
          calls sent directly to the fake ADAMANT node, 32 connections, interleaved rounds of a fixed number of
          requests; goal: added p50 < 1 ms per method (rpc); sendTokens transactions signed per second against
          raw Ed25519 signatures of the same digests (signing). --duration and --connections do not apply
  edge    the same small JSON answer (small) and a 1 MiB answer streamed in 64 KiB chunks (stream) through the HTTP
          edge on uWS and on node:http and through a bare node:http server (the baseline), each its own process,
          at 1 and --connections keep-alive connections: req/s, p50/p99, server CPU per request, uWS/node and
          node/bare ratios; goals (small, at --connections): uWS CPU per request <= 0.7x node's, node's <= 1.3x
          bare node:http's. uWS runs only where its binary loads (Node 20); elsewhere it is skipped with a line.
          --duration: measured seconds per server and connection count, in 3 rotating rounds (default 3)
  scale   growth tables (issue 30): each store filled from a seed through the project's storage layer (not HTTP) at
          several sizes, the built CLI restarted on it, and each operation measured per size with the ratio largest /
          smallest. files (small: 1k, 10k, 30k files; full: 10k, 100k, 1M): restart until HTTP and until health
          ready, details, storage metrics, file status, 4 KiB download and upload p50 at 1 connection with node CPU
          per request, GC dry run, RSS, registry size, the startup walk on an original store (no registry);
          rates (small: 30 and 182 days; full: 1 and 5 years of 10-minute snapshots, 30 pairs): restart until ready,
          /getHistory point and range p50, SQLite size; transfers: not built yet.
          --size small (default, a few minutes) or full (the issue's sizes: hours, tens of GiB of disk).
          --duration and --connections do not apply

options:
  --duration SECONDS   measurement per load run, after a 1 s warm-up (default 10; edge: 3)
  --connections N      concurrent keep-alive connections of the throughput runs (default 50)
  --only LIST          run only these sections of the benchmark
  --size SIZE          data size of a benchmark that has sizes (scale: small, full)
  -h, --help           this text
`;

class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The command line; a duration not given is the bench's default (known once the bench is loaded). */
interface ParsedArgs {
  readonly name: string;
  readonly durationSeconds: number | undefined;
  readonly connections: number;
  readonly only: readonly string[];
  readonly size: string | undefined;
}

function parseArgs(argv: readonly string[]): ParsedArgs | 'help' {
  let name: string | undefined;
  let durationSeconds: number | undefined;
  let connections = 50;
  let only: string[] = [];
  let size: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    const number = (min: number, max: number): number => {
      const v = Number(value());
      if (!Number.isFinite(v) || v < min || v > max) throw new UsageError(`${flag} must be a number between ${min} and ${max}`);
      return v;
    };
    switch (flag) {
      case '-h':
      case '--help':
        return 'help';
      case '--duration':
        durationSeconds = number(0.5, 600);
        break;
      case '--connections':
        connections = Math.round(number(1, 1000));
        break;
      case '--only':
        only = value().split(',').map((s) => s.trim()).filter((s) => s !== '');
        break;
      case '--size':
        size = value();
        break;
      default:
        if (flag.startsWith('-')) throw new UsageError(`unknown option ${flag}`);
        if (name !== undefined) throw new UsageError(`unexpected argument ${flag}`);
        name = flag;
    }
  }
  if (name === undefined) throw new UsageError('which benchmark?');
  return { name, durationSeconds, connections, only, size };
}

async function main(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (parsed === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const load = BENCHES[parsed.name];
  if (load === undefined) {
    process.stderr.write(`unknown benchmark: ${parsed.name}\n\n${USAGE}`);
    return 2;
  }
  const bench = await load();
  const options: BenchOptions = {
    durationSeconds: parsed.durationSeconds ?? bench.defaultDurationSeconds ?? 10,
    connections: parsed.connections,
    only: parsed.only,
    size: parsed.size ?? bench.sizes?.[0],
  };
  if (parsed.size !== undefined && !bench.sizes?.includes(parsed.size)) {
    const known = bench.sizes ? `known: ${bench.sizes.join(', ')}` : 'it has no sizes';
    process.stderr.write(`unknown size ${parsed.size} of ${parsed.name} (${known})\n\n${USAGE}`);
    return 2;
  }
  const unknown = options.only.filter((s) => !bench.sections.includes(s));
  if (unknown.length > 0) {
    process.stderr.write(`unknown section(s) of ${parsed.name}: ${unknown.join(', ')} (known: ${bench.sections.join(', ')})\n\n${USAGE}`);
    return 2;
  }
  const interrupted = (signal: NodeJS.Signals) => {
    process.stderr.write(`\n${signal}: stopping the processes this bench started\n`);
    terminateLoadWorkers();
    killAllTrackedNow();
    removeScratchDirs();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    await bench.run(options);
    return 0;
  } catch (error) {
    process.stderr.write(`bench ${parsed.name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}

// Exit explicitly: an idle keep-alive socket of fetch() must not hold a finished bench open
// (stdout and stderr are synchronous for files and pipes on Linux, so nothing printed is lost).
process.exit(await main(process.argv.slice(2)));
