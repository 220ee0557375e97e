// `npm run faults -- [--seeds N] [--seed S[,S…]] [--phase MS] [--kinds k1,k2 [--ordered]] [--keep] [--verbose]`: seeded fault runs of the
// files cluster (issue 29) outside `npm test`. Without --seed it runs N random seeds (default 10), one after the
// other; each failure prints its seed, its violations, the plan and the command that replays it. Needs root and
// network namespaces (no skipping here: it says why and exits 2). Exit 1 when a seed failed.

import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { cliBuilt } from './fault-nodes.js';
import { FAULT_KINDS, planRun, type FaultKind } from './fault-plan.js';
import { abortActiveRuns, runFaultPlan } from './fault-run.js';
import { netnsUnavailable, nftBinary } from './network.js';

const say = (line = '') => void process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seeds: { type: 'string' },
      seed: { type: 'string' },
      phase: { type: 'string' },
      kinds: { type: 'string' },
      ordered: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
    },
  });
  const unavailable = netnsUnavailable();
  if (unavailable) {
    say(`cannot run the fault harness: ${unavailable}`);
    return 2;
  }
  if (!cliBuilt()) {
    say('the CLI is not built: run `npm run build` first');
    return 2;
  }
  let kinds: FaultKind[] = values.kinds ? (values.kinds.split(',') as FaultKind[]) : [...FAULT_KINDS];
  for (const kind of kinds) if (!FAULT_KINDS.includes(kind)) throw new Error(`unknown fault kind ${kind} (known: ${FAULT_KINDS.join(', ')})`);
  if (!nftBinary() && kinds.includes('one-way')) {
    say('!!! nftables (nft) is not installed: the one-way cut is SKIPPED in these runs (apt-get install -y nftables)');
    kinds = kinds.filter((kind) => kind !== 'one-way');
  }
  const phaseMs = values.phase ? Number(values.phase) : undefined;
  const seeds = values.seed
    ? values.seed.split(',').map((seed) => Number(seed.trim()))
    : Array.from({ length: values.seeds ? Number(values.seeds) : 10 }, () => randomInt(1, 2 ** 31 - 1));
  if (seeds.some((seed) => !Number.isSafeInteger(seed))) throw new Error('seeds are integers');

  let stopping = false;
  process.on('SIGINT', () => {
    if (stopping) {
      say('\nsecond interrupt: killing the nodes of the run in progress');
      abortActiveRuns();
      process.exit(130);
    }
    stopping = true;
    say('\ninterrupt: stopping after the seed in progress (again to stop at once)');
  });

  const failed: number[] = [];
  const replay = (seed: number) =>
    `npm run faults -- --seed ${seed}${phaseMs ? ` --phase ${phaseMs}` : ''}${values.kinds ? ` --kinds ${kinds.join(',')}` : ''}${values.ordered ? ' --ordered' : ''}`;
  const started = Date.now();
  let ran = 0;
  for (const [index, seed] of seeds.entries()) {
    if (stopping) break;
    ran++;
    const plan = planRun(seed, { phaseMs, kinds, ordered: values.ordered });
    const result = await runFaultPlan(plan, { log: values.verbose ? (line) => say(`  ${line}`) : undefined, keepOnFailure: true, keep: values.keep });
    const head = `[${index + 1}/${seeds.length}] seed ${seed}: ${result.violations.length === 0 ? 'ok' : `FAILED (${result.violations.length} violations)`} in ${(result.ms / 1000).toFixed(1)} s`;
    say(head);
    if (values.verbose || result.violations.length > 0) say(result.summary.split('\n').map((line) => `    ${line}`).join('\n'));
    if (values.keep && result.violations.length === 0 && result.keptDir) say(`    node logs and configs (--keep): ${result.keptDir}`);
    if (result.violations.length > 0) {
      failed.push(seed);
      say(result.plan.split('\n').map((line) => `    ${line}`).join('\n'));
      for (const violation of result.violations) say(`    - ${violation}`);
      if (result.keptDir) say(`    node logs and configs: ${result.keptDir}`);
      say(`    replay: ${replay(seed)}`);
    }
  }
  say();
  // An interrupted run counts the seeds it ran, not the ones it was asked for.
  say(`${ran - failed.length} of ${ran} seeds passed in ${((Date.now() - started) / 60_000).toFixed(1)} min${stopping ? ` (interrupted after ${ran} of ${seeds.length})` : ''}`);
  if (failed.length > 0) {
    say(`failing seeds: ${failed.join(',')}`);
    say(`replay them all: ${replay(failed[0]!).replace(`--seed ${failed[0]}`, `--seed ${failed.join(',')}`)}`);
  }
  return failed.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? error}\n`);
    abortActiveRuns();
    process.exit(2);
  },
);
