// A small TCP fault proxy for the fault harness (issue 29): it sits on the path between two files nodes (each one's
// `nodes` entry for the other points at a proxy port) and can add latency, stall every connection mid-transfer (the
// bytes are held, nothing is closed) or reset connections (RST), now or after a number of bytes. Inert on import.

import { createServer, connect, type Server, type Socket } from 'node:net';

export type ProxyMode =
  | { kind: 'pass' }
  /** Every chunk is held `ms` before it is forwarded (each direction, order kept). */
  | { kind: 'latency'; ms: number }
  /** Nothing is forwarded in either direction; held bytes go on once the mode changes. Connections stay open. */
  | { kind: 'stall' }
  /** Every connection is reset once it has forwarded `afterBytes` more bytes (0: at once, and new ones at their first byte). */
  | { kind: 'reset'; afterBytes: number };

interface Direction {
  readonly queue: Array<{ chunk: Buffer; at: number }>;
  pumping: boolean;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  /** Bytes forwarded since the current mode began. */
  bytesInMode: number;
  closed: boolean;
  readonly directions: [Direction, Direction];
}

const HIGH_WATER_CHUNKS = 64;

export interface ProxyStats {
  connections: number;
  resets: number;
  bytes: number;
}

export class FaultProxy {
  readonly #server: Server;
  readonly #pairs = new Set<Pair>();
  readonly #target: { host: string; port: number };
  #mode: ProxyMode = { kind: 'pass' };
  #wake = new Set<() => void>();
  readonly stats: ProxyStats = { connections: 0, resets: 0, bytes: 0 };
  port = 0;

  private constructor(target: { host: string; port: number }) {
    this.#target = target;
    this.#server = createServer((client) => this.#accept(client));
  }

  /** Listens on `host` (an ephemeral port) and forwards to `target`. */
  static async start(host: string, target: { host: string; port: number }): Promise<FaultProxy> {
    const proxy = new FaultProxy(target);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(0, host, () => resolve());
    });
    proxy.port = (proxy.#server.address() as { port: number }).port;
    return proxy;
  }

  get mode(): ProxyMode {
    return this.#mode;
  }

  setMode(mode: ProxyMode): void {
    this.#mode = mode;
    for (const pair of this.#pairs) {
      pair.bytesInMode = 0;
      if (mode.kind === 'reset' && mode.afterBytes === 0) this.#reset(pair);
    }
    for (const wake of [...this.#wake]) wake();
  }

  /** Open connection pairs. */
  get open(): number {
    return this.#pairs.size;
  }

  async close(): Promise<void> {
    for (const pair of this.#pairs) this.#destroy(pair);
    for (const wake of [...this.#wake]) wake();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    this.stats.connections++;
    const upstream = connect(this.#target.port, this.#target.host);
    const pair: Pair = {
      client,
      upstream,
      bytesInMode: 0,
      closed: false,
      directions: [
        { queue: [], pumping: false },
        { queue: [], pumping: false },
      ],
    };
    this.#pairs.add(pair);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    if (this.#mode.kind === 'reset' && this.#mode.afterBytes === 0) return this.#reset(pair);
    this.#wire(pair, client, upstream, pair.directions[0]);
    this.#wire(pair, upstream, client, pair.directions[1]);
    for (const socket of [client, upstream]) {
      socket.on('error', () => this.#destroy(pair));
      socket.on('close', () => this.#destroy(pair));
    }
  }

  #wire(pair: Pair, from: Socket, to: Socket, direction: Direction): void {
    from.on('data', (chunk: Buffer) => {
      direction.queue.push({ chunk, at: Date.now() });
      if (direction.queue.length > HIGH_WATER_CHUNKS) from.pause();
      if (!direction.pumping) void this.#pump(pair, from, to, direction);
    });
    from.on('end', () => {
      // Half-close goes on once the held bytes have left.
      direction.queue.push({ chunk: Buffer.alloc(0), at: Date.now() });
      if (!direction.pumping) void this.#pump(pair, from, to, direction);
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.#wake.add(done);
    });
  }

  async #pump(pair: Pair, from: Socket, to: Socket, direction: Direction): Promise<void> {
    direction.pumping = true;
    try {
      while (!pair.closed && direction.queue.length > 0) {
        const mode = this.#mode;
        if (mode.kind === 'stall') {
          // Held until the mode changes (a wake); a long stall re-checks now and then.
          await this.#sleep(1_000);
          continue;
        }
        const head = direction.queue[0]!;
        if (mode.kind === 'latency') {
          const due = head.at + mode.ms - Date.now();
          if (due > 0) {
            await this.#sleep(due);
            continue;
          }
        }
        direction.queue.shift();
        if (direction.queue.length <= HIGH_WATER_CHUNKS / 2) from.resume();
        if (head.chunk.length === 0) {
          to.end();
          continue;
        }
        if (mode.kind === 'reset' && pair.bytesInMode + head.chunk.length > mode.afterBytes) {
          // Forward what fits, then reset both ends mid-transfer.
          const fits = Math.max(0, mode.afterBytes - pair.bytesInMode);
          if (fits > 0) to.write(head.chunk.subarray(0, fits));
          this.#reset(pair);
          return;
        }
        pair.bytesInMode += head.chunk.length;
        this.stats.bytes += head.chunk.length;
        if (!to.write(head.chunk)) await new Promise<void>((resolve) => {
          const go = () => {
            to.off('drain', go);
            to.off('close', go);
            resolve();
          };
          to.on('drain', go);
          to.on('close', go);
        });
      }
    } finally {
      direction.pumping = false;
    }
  }

  #reset(pair: Pair): void {
    if (pair.closed) return;
    this.stats.resets++;
    pair.closed = true;
    this.#pairs.delete(pair);
    for (const socket of [pair.client, pair.upstream]) {
      if (socket.destroyed) continue;
      // An RST, as a middlebox or a crashed host gives (not a FIN).
      if (typeof socket.resetAndDestroy === 'function' && socket.readyState !== 'opening') socket.resetAndDestroy();
      else socket.destroy();
    }
  }

  #destroy(pair: Pair): void {
    if (pair.closed) return;
    pair.closed = true;
    this.#pairs.delete(pair);
    pair.client.destroy();
    pair.upstream.destroy();
  }
}
