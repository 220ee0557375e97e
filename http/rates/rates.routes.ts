// The rates read API (docs/specs/rates.md §2.1, §4, §7; docs/notes/rates.md A): /get, /getHistory, /status.
// Envelope key order follows the original's interceptor: success, date, the endpoint's fields,
// last_updated, version. Failures carry only success, date and msg.

import { BoundedMemo } from '../../src/bounded-memo.js';
import type { Runtime } from '../../actors/runtime.js';
import { ratesApi } from '../../actors/rates/api.js';
import { scrubSecrets, type Logger } from '../../src/logger.js';
import { RATES_VERSION } from '../../src/rates/config.js';
import { filterByCoins, parseGetQuery, parseHistoryQuery, parseStatusQuery } from '../../src/rates/query.js';
import type { RateTable } from '../../src/rates/types.js';
import type { HttpMetrics } from '../metrics.js';
import { HttpServer, UWS_WRITTEN_AT_ONCE_BYTES, type HttpReply } from '../server.js';
import type { EngineName } from '../engine.js';

export interface RatesListenerOptions {
  readonly host: string;
  readonly port: number;
  readonly metrics?: HttpMetrics;
  /** `server.engine` (http/engine.ts). */
  readonly engine?: EngineName;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };
const VERSION_JSON = JSON.stringify(RATES_VERSION);
/** Public data read by browser wallets (notes F.23). */
const CORS_HEADERS = { 'access-control-allow-origin': '*' };

/** A request the client got wrong: 400 with the validation message (spec §7). */
class RatesBadRequest extends Error {
  override readonly name = 'RatesBadRequest';
}

/**
 * The table changes once per cycle but is read on every request: its JSON (whole, and per coin list) is
 * made once per table and reused until the refresh actor publishes a new table object.
 */
export class TableBodies {
  /** Distinct coin lists kept per table; clients choose them, so the cache is bounded. */
  static readonly MAX_FILTERS = 256;
  #table: RateTable | undefined;
  #whole: string | undefined;
  readonly #filtered = new Map<string, string>();

  json(table: RateTable, coins?: readonly string[]): string {
    if (table !== this.#table) {
      this.#table = table;
      this.#whole = undefined;
      this.#filtered.clear();
    }
    if (!coins) return (this.#whole ??= JSON.stringify(table));
    const key = coins.join(',');
    let body = this.#filtered.get(key);
    if (body === undefined) {
      body = JSON.stringify(filterByCoins(table, coins));
      if (this.#filtered.size >= TableBodies.MAX_FILTERS) this.#filtered.clear();
      this.#filtered.set(key, body);
    }
    return body;
  }
}

/**
 * `/get` query strings already parsed: wallets ask the same few queries over and over, and parsing is most of the
 * work of an answer whose body is cached (TableBodies). A parse depends on the string alone, so answers (refusals
 * too) are kept; clients choose the strings, so the cache is bounded and starts over when full.
 */
export class ParsedQueries<T> extends BoundedMemo<T> {
  static readonly MAX_ENTRIES = 256;

  constructor(parse: (raw: string) => T) {
    super(parse, ParsedQueries.MAX_ENTRIES);
  }
}

export function ratesServer(runtime: Runtime, options: RatesListenerOptions): HttpServer {
  const logger = runtime.logger.child({ actor: 'rates.http' });
  const api = ratesApi(runtime);
  const bodies = new TableBodies();
  const getQueries = new ParsedQueries(parseGetQuery);
  const reply = (status: number, body: string): HttpReply => ({ status, headers: JSON_HEADERS, body });
  /** The success envelope in the original key order, around an already serialized `fields` part. */
  const success = (fieldsJson: string): HttpReply => {
    const { last_updated } = api.status();
    return reply(200, `{"success":true,"date":${runtime.clock.now()},${fieldsJson},"last_updated":${last_updated},"version":${VERSION_JSON}}`);
  };
  const prepared = new PreparedAnswers();
  const failure = (status: number, msg: string): HttpReply => reply(status, JSON.stringify({ success: false, date: runtime.clock.now(), msg }));

  const server = new HttpServer({
    name: 'rates',
    engine: options.engine,
    host: options.host,
    port: options.port,
    logger,
    clock: runtime.clock,
    defaultHeaders: CORS_HEADERS,
    metrics: options.metrics,
    mapError: (error) => mapRatesError(error, failure, logger),
    notFound: () => failure(404, 'Not found'),
  });

  // Only on uWS, which is done with a small body when `end()` returns (UWS_WRITTEN_AT_ONCE_BYTES).
  const writesAtOnce = server.engine === 'uws';
  server.route('get', '/get', (request) => {
    const parsed = getQueries.get(request.query);
    if (!parsed.ok) throw new RatesBadRequest(parsed.msg);
    const table = api.cachedTable(parsed.rateLifetime);
    if (table === undefined) {
      const evaluated = api.table(parsed.rateLifetime).table;
      return success(`"result":${JSON.stringify(parsed.coins ? filterByCoins(evaluated, parsed.coins) : evaluated)}`);
    }
    const result = bodies.json(table, parsed.coins);
    // The hot path (issue 17): the whole answer, reply object included, was made once for this table and coin list;
    // only the date is written into it, so an answer allocates nothing here.
    if (writesAtOnce) {
      const answer = prepared.reply(result, api.lastUpdated(), runtime.clock.now());
      if (answer) return answer;
    }
    return success(`"result":${result}`);
  });

  server.route('get', '/getHistory', async (request, { signal }) => {
    const parsed = parseHistoryQuery(request.query);
    if (!parsed.ok) throw new RatesBadRequest(parsed.msg);
    const result = await api.history(parsed.query, signal);
    return success(`"result":${JSON.stringify(result)}`);
  });

  server.route('get', '/status', (request) => {
    const parsed = parseStatusQuery(request.query);
    if (!parsed.ok) throw new RatesBadRequest(parsed.msg);
    const { ready, updating, next_update } = api.status();
    return success(`"ready":${ready},"updating":${updating},"next_update":${next_update}`);
  });

  return server;
}

/** Where the date goes in a prepared answer: right after `{"success":true,"date":`. */
const DATE_PREFIX = '{"success":true,"date":';
/** Milliseconds since 1970 have 13 digits from 2001 to 2286; another width (a test clock) takes the ordinary path. */
const DATE_DIGITS = 13;
const DATE_MIN = 10 ** (DATE_DIGITS - 1);
const DATE_LIMIT = 10 ** DATE_DIGITS;
const DIGIT_ZERO = 0x30;

interface PreparedAnswer {
  readonly body: Buffer;
  /** The reply handed to the edge each time: the same object, its body rewritten in place. */
  readonly reply: HttpReply;
}

/**
 * `/get` success answers encoded once per result JSON and `last_updated` (so once per table and coin list), with a
 * 13-digit slot for the date that each answer overwrites in place: no per-request string of the table's size to
 * build, flatten and collect, and no reply object either. Bounded like the bodies it wraps.
 */
export class PreparedAnswers {
  static readonly MAX_ANSWERS = 256;
  readonly #answers = new Map<string, PreparedAnswer>();
  #lastUpdated: number | null = null;

  /** The answer's body with `now` as its date, or undefined when it cannot be prepared (too large, another date width). */
  answer(resultJson: string, lastUpdated: number | null, now: number): Buffer | undefined {
    return this.#dated(resultJson, lastUpdated, now)?.body;
  }

  /** The same as a reply: one object per prepared answer, returned again for every request. */
  reply(resultJson: string, lastUpdated: number | null, now: number): HttpReply | undefined {
    return this.#dated(resultJson, lastUpdated, now)?.reply;
  }

  #dated(resultJson: string, lastUpdated: number | null, now: number): PreparedAnswer | undefined {
    if (!Number.isInteger(now) || now < DATE_MIN || now >= DATE_LIMIT) return undefined;
    if (lastUpdated !== this.#lastUpdated) {
      this.#answers.clear();
      this.#lastUpdated = lastUpdated;
    }
    let prepared = this.#answers.get(resultJson);
    if (prepared === undefined) {
      const text = `${DATE_PREFIX}${'0'.repeat(DATE_DIGITS)},"result":${resultJson},"last_updated":${lastUpdated},"version":${VERSION_JSON}}`;
      if (Buffer.byteLength(text) > UWS_WRITTEN_AT_ONCE_BYTES) return undefined;
      const body = Buffer.from(text);
      prepared = { body, reply: { status: 200, headers: JSON_HEADERS, body } };
      if (this.#answers.size >= PreparedAnswers.MAX_ANSWERS) this.#answers.clear();
      this.#answers.set(resultJson, prepared);
    }
    // The digits from the last one back, without a string per answer (`now` is an integer below 2^53).
    const body = prepared.body;
    let rest = now;
    for (let at = DATE_PREFIX.length + DATE_DIGITS - 1; at >= DATE_PREFIX.length; at--) {
      body[at] = DIGIT_ZERO + (rest % 10);
      rest = Math.floor(rest / 10);
    }
    return prepared;
  }
}

/** spec §7: 400 names the problem; anything else is 500 `Something went wrong`, detail only in the log. */
function mapRatesError(error: unknown, failure: (status: number, msg: string) => HttpReply, logger: Logger): HttpReply {
  if (error instanceof RatesBadRequest) return failure(400, error.message);
  logger.error({ reason: scrubSecrets(error instanceof Error ? `${error.name}: ${error.message}` : String(error)) }, 'request failed');
  return failure(500, 'Something went wrong');
}
