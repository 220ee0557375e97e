// Request counters per listener and route: count by status class and a latency sum, cheap enough for the
// hot path (a few integer adds per request).

export interface RouteMetrics {
  requests: number;
  byStatus: Record<string, number>;
  totalMs: number;
}

export class HttpMetrics {
  readonly #routes = new Map<string, RouteMetrics>();

  observe(listener: string, route: string, status: number, elapsedMs: number): void {
    const key = `${listener} ${route}`;
    let entry = this.#routes.get(key);
    if (!entry) {
      entry = { requests: 0, byStatus: {}, totalMs: 0 };
      this.#routes.set(key, entry);
    }
    entry.requests++;
    const statusClass = `${Math.floor(status / 100)}xx`;
    entry.byStatus[statusClass] = (entry.byStatus[statusClass] ?? 0) + 1;
    entry.totalMs += elapsedMs;
  }

  snapshot(): Record<string, RouteMetrics> {
    return Object.fromEntries([...this.#routes].map(([key, value]) => [key, { ...value, byStatus: { ...value.byStatus } }]));
  }
}
