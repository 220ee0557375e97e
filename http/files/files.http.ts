// What every files route module shares (docs/specs/files-node.md §5, §7; notes A.1, C10): `{error}` bodies, the
// one table from failure kind to status, CID parsing, the admin guard, and the context the route modules
// register against. Route modules: files.routes.ts (files, operator pins) and the modules it registers.

import { CID } from 'multiformats/cid';
import { filesApi, type FilesApi } from '../../actors/files/api.js';
import type { Runtime } from '../../actors/runtime.js';
import type { AdmissionLimiter } from '../../src/files/admission.js';
import { ProxyTrust } from '../../src/files/client-address.js';
import type { FilesConfig } from '../../src/files/config.js';
import { FileNotFoundError, FileTimeoutError, InsufficientStorageError, QuorumNotReachedError, RunInProgressError, UnreadableContentError } from '../../src/files/errors.js';
import { unservableCidReason } from '../../src/files/cid.js';
import { FixedWindowRateLimiter, rateLimitHeaders } from '../../src/files/rate-limit.js';
import type { Logger } from '../../src/logger.js';
import { adminRefusal } from '../auth.js';
import { PayloadTooLargeError, RequestTimeoutError } from '../body.js';
import { streamedJson } from '../json-body.js';
import type { Handler, HttpReply, HttpRequest, HttpServer } from '../server.js';

/** A clean refusal with a status and the `{error}` text of notes C10. */
export class FilesHttpError extends Error {
  override readonly name = 'FilesHttpError';
  constructor(
    readonly status: number,
    message: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

export const json = (status: number, body: unknown, headers?: Record<string, string>): HttpReply => ({
  status,
  headers: headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS,
  body: JSON.stringify(body),
});

/** Authenticated answers are never cached by an intermediary (notes A.1). */
export const adminJson = (status: number, body: unknown): HttpReply => json(status, body, { 'cache-control': 'no-store' });

/**
 * `adminJson` for answers that grow with the store, a GC report or the pin list: tens of MB at a million files,
 * written in pieces instead of one string (http/json-body.ts).
 */
export const adminJsonInPieces = (status: number, body: unknown, ended?: () => void): Promise<HttpReply> =>
  streamedJson(status, body, { ...JSON_HEADERS, 'cache-control': 'no-store' }, ended);

/** spec §7: one table from failure kind to status and `{error}` text. */
export function mapFilesError(error: unknown): HttpReply {
  if (error instanceof FilesHttpError) return json(error.status, { error: error.message }, error.headers);
  if (error instanceof FileTimeoutError) return json(408, { error: 'File request timed out' });
  if (error instanceof FileNotFoundError) return json(404, { error: 'File not found' });
  if (error instanceof UnreadableContentError) return json(400, { error: 'Invalid CID' });
  if (error instanceof PayloadTooLargeError) return json(413, { error: 'Request too large' });
  // An upload body that stalled, trickled below the floor or outlived its whole-request deadline (issue 14).
  if (error instanceof RequestTimeoutError) return json(408, { error: 'Request timed out' });
  if (error instanceof InsufficientStorageError) return json(507, { error: 'Insufficient storage' });
  if (error instanceof RunInProgressError) return json(409, { error: error.message });
  if (error instanceof QuorumNotReachedError) return json(503, { error: error.message });
  const name = (error as Error | undefined)?.name;
  if (name === 'NodeNotRunningError' || name === 'ActorUnavailableError' || name === 'MessageNotAcceptedError') return json(503, { error: 'Service unavailable' });
  return json(500, { error: 'Internal Server Error' });
}

/** A CID this node can serve: it parses, and its codec and hash are ones the node can read and verify (src/files/cid.ts). */
export function parseCid(text: string | undefined): CID {
  let cid: CID;
  try {
    cid = CID.parse(text ?? '');
  } catch {
    throw new FilesHttpError(400, 'Invalid CID');
  }
  if (unservableCidReason(cid) !== undefined) throw new FilesHttpError(400, 'Invalid CID');
  return cid;
}

/** The per-client request rate limits (spec §8; notes A.9): uploads; pins (operator); downloads and status reads. */
export type RateLimitName = 'upload' | 'pin' | 'read';

/** notes C10, C23: the rate-limit refusal text; its `Retry-After` is the time left in the client's window. */
export const RATE_LIMITED_TEXT = 'Too many requests. Please try again later.';

/**
 * Seconds an admission refusal asks the client to wait (spec §7: "an admission refusal carries
 * `Retry-After: 5`"): fixed, unlike a rate-limit refusal, so a client can tell the two apart.
 */
export const ADMISSION_RETRY_AFTER_SECONDS = '5';

/** Adds headers to a reply (the RateLimit fields of an allowed request). */
export const withHeaders = (reply: HttpReply, headers: Record<string, string>): HttpReply => ({ ...reply, headers: { ...reply.headers, ...headers } });

/** What a route module registers against. */
export interface FilesRouteContext {
  readonly server: HttpServer;
  readonly runtime: Runtime;
  readonly config: FilesConfig;
  readonly logger: Logger;
  /** Upload, incoming-copy and download slots of this process (their occupancy is node details' `concurrency`). */
  readonly admission: AdmissionLimiter;
  /** One limiter per policy for this listener, on the runtime's clock (spec §8: in memory, per process). */
  readonly rateLimits: Readonly<Record<RateLimitName, FixedWindowRateLimiter>>;
  /**
   * The client address a request counts under: the socket peer, or the forwarding client when the peer is a
   * trusted proxy (`trustProxy`, spec §5). Read it before the handler's first await (uWS request data).
   */
  clientKey(request: HttpRequest): string;
  /**
   * Counts one request of `client` against `name`. Over the limit: throws the 429 of notes C23 (RateLimit
   * fields and `Retry-After` = seconds until the window closes). Allowed: the RateLimit fields for the answer.
   */
  limitRate(name: RateLimitName, client: string): Record<string, string>;
  /** The files actors' typed asks; each bounded by discovery + 5 s unless the call gives its own timeout. */
  readonly api: FilesApi;
  /** spec §5: key unset → 503 before anything else; missing or wrong → 401; then the handler. */
  admin(handler: Handler): Handler;
}

export function filesRouteContext(server: HttpServer, runtime: Runtime, config: FilesConfig, admission: AdmissionLimiter, logger: Logger): FilesRouteContext {
  const defaultTimeoutMs = config.findFileTimeout + 5_000;
  const adminApiKey = config.adminApiKey || undefined;
  const trust = new ProxyTrust(config.trustProxy);
  const now = () => runtime.clock.now();
  const rateLimits = {
    upload: new FixedWindowRateLimiter(config.rateLimits.upload, now, { name: 'upload' }),
    pin: new FixedWindowRateLimiter(config.rateLimits.pin, now, { name: 'pin' }),
    read: new FixedWindowRateLimiter(config.rateLimits.read, now, { name: 'read' }),
  };
  return {
    server,
    runtime,
    config,
    logger,
    admission,
    rateLimits,
    clientKey: (request) => trust.clientOf(request.remoteAddress, request.headers['x-forwarded-for']),
    limitRate: (name, client) => {
      const limiter = rateLimits[name];
      const decision = limiter.hit(client);
      const headers = rateLimitHeaders(limiter.name, limiter.policy, decision);
      if (!decision.allowed) throw new FilesHttpError(429, RATE_LIMITED_TEXT, { ...headers, 'retry-after': String(decision.resetSeconds) });
      return headers;
    },
    api: filesApi(runtime, defaultTimeoutMs),
    admin: (handler) => (request, context) => {
      const refusal = adminRefusal(request.headers['x-api-key'], adminApiKey);
      return refusal ? json(refusal.status, { error: refusal.error }) : handler(request, context);
    },
  };
}
