// Grouping and dominant-group choice of the rates merge pipeline (docs/notes/rates.md B.4, B.5).
// Pure functions over one pair's fresh quotes; merge.ts drives them per pair.

/** One fresh quote of one pair, as the grouping step sees it. */
export interface GroupMember {
  readonly source: string;
  readonly price: number;
  readonly receivedAt: number;
  /** Voting weight of the source (notes B.5; 0 = quotes but does not vote). */
  readonly weight: number;
}

/** A run of quotes close enough to the run's lowest price (notes B.4). Members stay price-ascending. */
export interface PriceGroup<M extends GroupMember = GroupMember> {
  /** Sum of the members' source weights. */
  readonly weight: number;
  readonly members: readonly M[];
}

export type DominantGroup<M extends GroupMember = GroupMember> =
  | { readonly ok: true; readonly group: PriceGroup<M> }
  | { readonly ok: false; readonly message: string };

/**
 * `100·|a−b| / ((a+b)/2)`: symmetric, at most 200 for non-negative inputs (notes B.4).
 * Evaluated in the original's operation order so floating-point results at a threshold boundary
 * match 4.1 bit for bit (pd(0.03, 0.05) is 50.000000000000014, not 50).
 * Two zero weights are a tie (0), not NaN, so two groups of weight-0 sources conflict
 * instead of silently failing every comparison (the later upstream `calculatePercentageDifference`).
 */
export function percentDifference(a: number, b: number): number {
  if (a === 0 && b === 0) return 0;
  return 100 * Math.abs((a - b) / ((a + b) / 2));
}

/**
 * The original's `splitIntoGroups`, exactly (notes B.4): `sorted` must be price-ascending.
 * From every start index a group is extended while `pd(start, next) ≤ threshold` and stops at
 * the first failure; it is kept only if it reaches further than the last kept group. Groups may
 * overlap (a quote can belong to two groups), which is what makes weights compare as documented.
 */
export function splitIntoGroups<M extends GroupMember>(sorted: readonly M[], threshold: number): PriceGroup<M>[] {
  const groups: PriceGroup<M>[] = [];
  let lastEnd = -1;
  for (let start = 0; start < sorted.length; start++) {
    // Once a kept group reaches the last quote no later start can reach further.
    if (lastEnd === sorted.length - 1) break;
    const startPrice = sorted[start]!.price;
    let weight = sorted[start]!.weight;
    let end = start;
    for (let i = start + 1; i < sorted.length; i++) {
      if (percentDifference(startPrice, sorted[i]!.price) > threshold) break;
      weight += sorted[i]!.weight;
      end = i;
    }
    if (end > lastEnd) {
      groups.push({ weight, members: sorted.slice(start, end + 1) });
      lastEnd = end;
    }
  }
  return groups;
}

/** `0.03 (CoinPaprika);0.031 (Binance)`: the member list of the conflict message (notes B.5). */
export function formatGroup(group: PriceGroup): string {
  return group.members.map((m) => `${m.price} (${m.source})`).join(';');
}

/**
 * The original's `getBiggestGroupPrice` (notes B.5). One group wins outright. Otherwise the two
 * heaviest are compared (stable sort, so equal weights keep ascending price order) and the
 * heaviest wins only if `pd(w1, w2) > groupPercentage`. `groupPercentage` is a distance between
 * group weights, not a share of sources (later upstream documentation corrects the old wiki).
 */
export function chooseDominantGroup<M extends GroupMember>(
  groups: readonly PriceGroup<M>[],
  groupPercentage: number,
): DominantGroup<M> {
  if (groups.length === 0) return { ok: false, message: 'No prices for the pair available' };
  if (groups.length === 1) return { ok: true, group: groups[0]! };
  const [first, second] = [...groups].sort((a, b) => b.weight - a.weight) as [PriceGroup<M>, PriceGroup<M>];
  if (percentDifference(first.weight, second.weight) > groupPercentage) return { ok: true, group: first };
  return {
    ok: false,
    message: `The difference between sources is too big: ${formatGroup(first)} against ${formatGroup(second)}`,
  };
}
