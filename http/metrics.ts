// Request counters per listener and route: count by status class and a latency sum. Each route's entry
// is created once at registration, so the hot path is a few integer adds.

export interface RouteMetrics {
  requests: number;
  byStatus: Record<string, number>;
  totalMs: number;
}

export function observe(entry: RouteMetrics, status: number, elapsedMs: number): void {
  entry.requests++;
  const statusClass = status < 200 ? '1xx' : status < 300 ? '2xx' : status < 400 ? '3xx' : status < 500 ? '4xx' : '5xx';
  entry.byStatus[statusClass] = (entry.byStatus[statusClass] ?? 0) + 1;
  entry.totalMs += elapsedMs;
}

export class HttpMetrics {
  readonly #routes = new Map<string, RouteMetrics>();

  /** The counters of one route (`<listener> <pattern>`), created on first use. */
  route(listener: string, pattern: string): RouteMetrics {
    const key = `${listener} ${pattern}`;
    let entry = this.#routes.get(key);
    if (!entry) {
      entry = { requests: 0, byStatus: {}, totalMs: 0 };
      this.#routes.set(key, entry);
    }
    return entry;
  }

  snapshot(): Record<string, RouteMetrics> {
    return Object.fromEntries([...this.#routes].map(([key, value]) => [key, { ...value, byStatus: { ...value.byStatus } }]));
  }
}

/**
 * One listener's totals since process start (docs/specs/files-node.md §2.5 "HTTP metrics"; notes A.2.1): no
 * paths or labels. A response whose connection closed before its body finished counts as `aborted` and in
 * no status family; `inFlight` includes requests still being answered.
 */
export class ListenerTotals {
  requests = 0;
  readonly responses = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  aborted = 0;
  inFlight = 0;
  totalResponseTimeMs = 0;
  maxResponseTimeMs = 0;

  started(): void {
    this.requests++;
    this.inFlight++;
  }

  finished(status: number, aborted: boolean, elapsedMs: number): void {
    this.inFlight--;
    if (aborted) {
      this.aborted++;
      return;
    }
    const family = status < 300 ? '2xx' : status < 400 ? '3xx' : status < 500 ? '4xx' : '5xx';
    this.responses[family]++;
    this.totalResponseTimeMs += elapsedMs;
    if (elapsedMs > this.maxResponseTimeMs) this.maxResponseTimeMs = elapsedMs;
  }

  snapshot() {
    const completed = this.responses['2xx'] + this.responses['3xx'] + this.responses['4xx'] + this.responses['5xx'];
    return {
      requests: this.requests,
      responses: { ...this.responses },
      aborted: this.aborted,
      inFlight: this.inFlight,
      totalResponseTimeMs: this.totalResponseTimeMs,
      maxResponseTimeMs: this.maxResponseTimeMs,
      averageResponseTimeMs: completed === 0 ? 0 : this.totalResponseTimeMs / completed,
    };
  }
}
