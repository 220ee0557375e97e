// What one seeded fault run does (issue 29), decided from the seed alone and before anything starts, so a failing seed
// replays the same cluster variant, the same fault schedule and the same workload choices. Pure. Inert on import.
//
// Timing is the one thing a seed cannot fix: the nodes are real processes on a shared machine, so a replay repeats
// the plan, not every interleaving. A failure prints the plan with its seed.

import { prng } from '../random.js';

export const NODE_NAMES = ['alpha', 'beta', 'gamma'] as const;
export type NodeName = (typeof NODE_NAMES)[number];

export const FAULT_KINDS = ['partition', 'split', 'one-way', 'latency', 'stall', 'reset', 'kill', 'restart', 'reserve'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Faults of one class act on the same things (routes and links, the proxy, the process): two never overlap. */
const FAULT_CLASS: Readonly<Record<FaultKind, 'network' | 'proxy' | 'process' | 'disk'>> = {
  partition: 'network',
  split: 'network',
  'one-way': 'network',
  latency: 'proxy',
  stall: 'proxy',
  reset: 'proxy',
  kill: 'process',
  restart: 'process',
  reserve: 'disk',
};

/** Faults after which the target has no working path to any peer (its health must leave `ready`). */
export const CUTTING_FAULTS: ReadonlySet<FaultKind> = new Set(['partition', 'split', 'reserve']);

export type KillDuring = 'upload' | 'copy' | 'repair' | 'gc';

export interface PlannedFault {
  /** ms after the fault phase began. */
  readonly at: number;
  readonly kind: FaultKind;
  readonly target: NodeName;
  /** one-way: the peer the target can no longer send to. */
  readonly peer?: NodeName;
  /** How long the fault lasts (kill: how long the node stays down). */
  readonly durationMs: number;
  readonly during?: KillDuring;
  /** kill: ms after the operation began. */
  readonly killAfterMs?: number;
  readonly latencyMs?: number;
  /** reset: each connection is reset once it has carried this many more bytes. */
  readonly resetAfterBytes?: number;
}

export interface Variant {
  /** Designated copies of every file (placement tier from age 0). */
  readonly copies: 2 | 3;
  readonly ackQuorum: number;
  /** `requireQuorumOnUpload`: an upload short of its quorum is refused (503) and rolled back everywhere. */
  readonly strict: boolean;
  /** `storage.confirmationRequired`: uploads are temporary until confirmed. */
  readonly confirmationRequired: boolean;
  /** The two nodes whose libp2p traffic runs through the TCP fault proxy (both directions). */
  readonly proxied: readonly [NodeName, NodeName];
}

export interface FaultPlan {
  readonly seed: number;
  readonly variant: Variant;
  readonly phaseMs: number;
  readonly faults: readonly PlannedFault[];
  /** The seed of the workload's own random stream (uploads, sizes, targets). */
  readonly workloadSeed: number;
}

export interface PlanOptions {
  /** Length of the fault phase (default 20 s). */
  readonly phaseMs?: number;
  /** Fault kinds that may be planned (default: all); a kind the machine cannot inject is left out by the caller. */
  readonly kinds?: readonly FaultKind[];
  /** Take the kinds in their order, one fault each (round robin), instead of at random: a fixed run covers them all. */
  readonly ordered?: boolean;
}

export const DEFAULT_PHASE_MS = 20_000;

export function planRun(seed: number, options: PlanOptions = {}): FaultPlan {
  const random = prng(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  const between = (low: number, high: number) => Math.round(low + random() * (high - low));
  const phaseMs = options.phaseMs ?? DEFAULT_PHASE_MS;
  const kinds = options.kinds ?? FAULT_KINDS;
  if (kinds.length === 0) throw new Error('no fault kind to plan');

  const copies = pick([2, 3] as const);
  const strict = random() < 0.3;
  const ackQuorum = strict ? copies : pick([1, 2]);
  const confirmationRequired = !strict && random() < 0.3;
  const first = pick(NODE_NAMES);
  const proxied: [NodeName, NodeName] = [first, pick(NODE_NAMES.filter((name) => name !== first))];

  const faults: PlannedFault[] = [];
  // Mostly one after the other; now and then (never in an ordered plan) a second fault of another class on another
  // node begins while one holds (a kill during a partition, a stall during a split).
  let end = 0;
  for (let at = between(1_000, 2_500); at < phaseMs - 2_000; ) {
    const previous = faults.at(-1);
    let kind = options.ordered ? kinds[faults.length % kinds.length]! : pick(kinds);
    let target = kind === 'latency' || kind === 'stall' || kind === 'reset' ? pick(proxied) : pick(NODE_NAMES);
    if (previous && !options.ordered && previous.durationMs > 2_500 && random() < 0.3) {
      const overlapAt = previous.at + between(500, previous.durationMs - 1_000);
      const active = faults.filter((fault) => fault.at + fault.durationMs > overlapAt);
      const candidates = kinds.filter((candidate) => active.every((fault) => FAULT_CLASS[fault.kind] !== FAULT_CLASS[candidate]));
      const targets = NODE_NAMES.filter((name) => active.every((fault) => fault.target !== name));
      const kindOf = pick(candidates.length > 0 ? candidates : kinds);
      const targetsFor = kindOf === 'latency' || kindOf === 'stall' || kindOf === 'reset' ? targets.filter((name) => proxied.includes(name)) : targets;
      if (candidates.length > 0 && targetsFor.length > 0) {
        kind = kindOf;
        target = pick(targetsFor);
        at = overlapAt;
      }
    }
    const durationMs = Math.min(between(3_000, 9_000), Math.max(2_000, phaseMs - at));
    const fault: PlannedFault = {
      at,
      kind,
      target,
      durationMs,
      ...(kind === 'one-way' ? { peer: pick(NODE_NAMES.filter((name) => name !== target)) } : {}),
      ...(kind === 'kill' ? { during: pick(['upload', 'copy', 'repair', 'gc'] as const), killAfterMs: between(50, 900) } : {}),
      ...(kind === 'latency' ? { latencyMs: between(40, 400) } : {}),
      ...(kind === 'reset' ? { resetAfterBytes: between(16_384, 1_572_864) } : {}),
    };
    faults.push(fault);
    end = Math.max(end, at + durationMs);
    at = end + between(500, 3_000);
  }
  return { seed, variant: { copies, ackQuorum, strict, confirmationRequired, proxied }, phaseMs, faults, workloadSeed: Math.floor(random() * 2 ** 31) };
}

/** One line per fault, for a failure report. */
export function describePlan(plan: FaultPlan): string {
  const { variant } = plan;
  const lines = [
    `seed ${plan.seed}: copies ${variant.copies}, ackQuorum ${variant.ackQuorum}${variant.strict ? ', strict uploads' : ''}${variant.confirmationRequired ? ', confirmation required' : ''}, proxy between ${variant.proxied.join(' and ')}, fault phase ${plan.phaseMs} ms`,
  ];
  for (const fault of plan.faults) lines.push(`  ${describeFault(fault)}`);
  return lines.join('\n');
}

export function describeFault(fault: PlannedFault): string {
  const extra = [
    fault.peer ? `→ ${fault.peer}` : '',
    fault.during ? `during ${fault.during}, after ${fault.killAfterMs} ms` : '',
    fault.latencyMs ? `${fault.latencyMs} ms` : '',
    fault.resetAfterBytes ? `after ${fault.resetAfterBytes} bytes` : '',
  ].filter(Boolean);
  return `+${(fault.at / 1000).toFixed(1)} s ${fault.kind} ${fault.target}${extra.length ? ` (${extra.join(', ')})` : ''} for ${(fault.durationMs / 1000).toFixed(1)} s`;
}
