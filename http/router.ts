// Route matching for engines without a router of their own (node:http), with uWS's rules so a route table means the
// same on either engine: a path's segments are compared one by one, a static segment wins over a `:param`, which
// wins over a trailing `/*` (any rest of the path, also none), and a parameter never matches an empty segment; a
// route for the method wins over an `any` route;
// among equals the first registered wins. Paths are matched raw (undecoded), as uWS does.

import type { EngineMethod } from './engine.js';

interface Entry<T> {
  readonly method: string;
  readonly segments: readonly string[];
  readonly wildcard: boolean;
  readonly value: T;
  readonly order: number;
}

export interface RouteMatch<T> {
  readonly value: T;
  readonly params: readonly string[];
}

const segmentsOf = (path: string): string[] => path.split('/').slice(1);

export class Router<T> {
  readonly #entries: Entry<T>[] = [];

  add(method: EngineMethod, pattern: string, value: T): void {
    const wildcard = pattern.endsWith('/*');
    const segments = segmentsOf(wildcard ? pattern.slice(0, -2) || '/' : pattern);
    // '/*' has no fixed segment at all.
    const fixed = wildcard && pattern === '/*' ? [] : segments;
    this.#entries.push({ method: method === 'del' ? 'delete' : method, segments: fixed, wildcard, value, order: this.#entries.length });
  }

  /** The best route for a lower-case `method` and a raw `path`, with its `:param` values in order. */
  match(method: string, path: string): RouteMatch<T> | undefined {
    const parts = segmentsOf(path);
    let best: { entry: Entry<T>; rank: number[]; params: string[] } | undefined;
    for (const entry of this.#entries) {
      if (entry.method !== 'any' && entry.method !== method) continue;
      const rank = rankOf(entry, parts);
      if (!rank) continue;
      if (!best || better(rank, best.rank) || (equal(rank, best.rank) && entry.order < best.entry.order)) {
        best = { entry, rank, params: paramsOf(entry, parts) };
      }
    }
    return best && { value: best.entry.value, params: best.params };
  }
}

/** Per segment 3 (static), 2 (param), 1 (covered by the wildcard); then 1 for a specific method. Undefined: no match. */
function rankOf<T>(entry: Entry<T>, parts: readonly string[]): number[] | undefined {
  const { segments, wildcard } = entry;
  if (wildcard ? parts.length < segments.length : parts.length !== segments.length) return undefined;
  const rank: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const segment = segments[i];
    if (segment === undefined) rank.push(1);
    // A parameter never matches an empty segment (uWS: `GET /api/file/` is not `/api/file/:cid`).
    else if (segment.startsWith(':')) {
      if (parts[i] === '') return undefined;
      rank.push(2);
    }
    else if (segment === parts[i]) rank.push(3);
    else return undefined;
  }
  rank.push(entry.method === 'any' ? 0 : 1);
  return rank;
}

function better(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return a.length > b.length;
}

const equal = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((value, i) => value === b[i]);

function paramsOf<T>(entry: Entry<T>, parts: readonly string[]): string[] {
  const params: string[] = [];
  entry.segments.forEach((segment, i) => {
    if (segment.startsWith(':')) params.push(parts[i]!);
  });
  return params;
}
