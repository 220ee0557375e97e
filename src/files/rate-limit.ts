// Per-client request rate limits of the files node (docs/specs/files-node.md §7 429 row, §8 "upload rate limit,
// read rate limit … per client address, in memory per process; a restart clears it and each process keeps
// its own counters"; notes A.9, C23). Pure: the clock is injected.
//
// A fixed window per client, as the later upstream (express-rate-limit's memory store) counts: a client's
// window opens at its first request and lasts `windowMs`; up to `limit` requests pass in it, the rest are
// refused until it closes. Refused requests count too, so hammering does not earn an earlier reset.
//
// Memory is bounded: windows live in a Map in the order they opened, so the expired ones sit at the front
// and are swept on every hit; at most `maxKeys` clients are tracked. At the cap the oldest open window is
// dropped: that client starts a fresh window early. The alternative, refusing clients the table has no
// room for, would let anyone who can present enough addresses lock every new client out; dropping the oldest
// window forgives at most the client whose window was closest to its end anyway.

import type { RateLimitPolicy } from './config.js';

export type { RateLimitPolicy } from './config.js';

/** Room for this many clients per limiter (about 150 bytes each: a few MiB per limiter at the cap). */
export const DEFAULT_MAX_TRACKED_CLIENTS = 50_000;

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  /** Requests left in the current window after this one. */
  readonly remaining: number;
  /** Whole seconds until the window closes, at least 1 (the `Retry-After` of a refusal, notes C23). */
  readonly resetSeconds: number;
}

interface Window {
  count: number;
  readonly opensAt: number;
}

export interface RateLimiterOptions {
  /** The policy's name in the `RateLimit` headers. */
  readonly name: string;
  readonly maxKeys?: number;
}

export class FixedWindowRateLimiter {
  readonly name: string;
  readonly #windows = new Map<string, Window>();
  readonly #maxKeys: number;

  constructor(
    readonly policy: RateLimitPolicy,
    private readonly now: () => number,
    options: RateLimiterOptions,
  ) {
    this.name = options.name;
    this.#maxKeys = Math.max(1, options.maxKeys ?? DEFAULT_MAX_TRACKED_CLIENTS);
  }

  /** How many clients have a window open (expired ones not swept yet included). */
  get trackedKeys(): number {
    return this.#windows.size;
  }

  /** Counts one request of `key` and says whether it may pass. */
  hit(key: string): RateDecision {
    const now = this.now();
    this.#sweep(now);
    let window = this.#windows.get(key);
    if (window && !this.#open(window, now)) {
      this.#windows.delete(key);
      window = undefined;
    }
    if (!window) {
      if (this.#windows.size >= this.#maxKeys) this.#windows.delete(this.#windows.keys().next().value!);
      window = { count: 0, opensAt: now };
      // Appended at the end: the Map stays in opening order, which the sweep relies on.
      this.#windows.set(key, window);
    }
    // Saturates: a client refused for a whole window never overflows anything.
    if (window.count <= this.policy.limit) window.count++;
    const closesIn = window.opensAt + this.policy.windowMs - now;
    return {
      allowed: window.count <= this.policy.limit,
      limit: this.policy.limit,
      remaining: Math.max(0, this.policy.limit - window.count),
      resetSeconds: Math.max(1, Math.ceil(closesIn / 1000)),
    };
  }

  /**
   * A window is open from its first request for `windowMs`. One that opened "in the future" means the clock
   * went back: it is closed too, so a clock step never blocks a client for longer than one window.
   */
  #open(window: Window, now: number): boolean {
    return now >= window.opensAt && now < window.opensAt + this.policy.windowMs;
  }

  /** Drops the closed windows at the front (the oldest); stops at the first open one. */
  #sweep(now: number): void {
    for (const [key, window] of this.#windows) {
      if (this.#open(window, now)) break;
      this.#windows.delete(key);
    }
  }
}

/**
 * The draft-8 IETF RateLimit fields for one decision (notes A.9, C23: no `X-RateLimit-*`):
 * `RateLimit-Policy: "<name>"; q=<limit>; w=<window seconds>` and `RateLimit: "<name>"; r=<remaining>; t=<seconds to reset>`.
 * Header names are lower case, as the edge writes them.
 */
export function rateLimitHeaders(name: string, policy: RateLimitPolicy, decision: RateDecision): Record<string, string> {
  return {
    'ratelimit-policy': `"${name}"; q=${policy.limit}; w=${Math.ceil(policy.windowMs / 1000)}`,
    ratelimit: `"${name}"; r=${decision.remaining}; t=${decision.resetSeconds}`,
  };
}
