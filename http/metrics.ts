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
