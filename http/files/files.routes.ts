// The files node's HTTP contract (docs/specs/files-node.md §4, §5, §7; notes A.1–A.5): the listener, file and
// operator pin routes here; node, storage and peer-network routes in their own modules, registered below.
// Content moves through the files actors (ask); the edge never touches helia, the blockstore or the registry.

import busboy from 'busboy';
import type { Readable } from 'node:stream';
import type { UploadOutcome, UploadPart, UploadParts } from '../../actors/files/content.actor.js';
import type { Runtime } from '../../actors/runtime.js';
import type { AdmissionLimiter, Release } from '../../src/files/admission.js';
import type { FilesConfig } from '../../src/files/config.js';
import { storagePolicy } from '../../src/files/policy.js';
import { CorsPolicy } from '../cors.js';
import { endingWith } from '../stream-end.js';
import type { HttpMetrics } from '../metrics.js';
import { AbortedError } from '../../src/errors.js';
import type { BodyDeadlines } from '../body.js';
import { HttpServer, type HttpRequest } from '../server.js';
import {
  ADMISSION_RETRY_AFTER_SECONDS,
  adminJson,
  adminJsonInPieces,
  FilesHttpError,
  filesRouteContext,
  json,
  JSON_HEADERS,
  mapFilesError,
  parseCid,
  withHeaders,
  type FilesRouteContext,
} from './files.http.js';
import { registerGcRoutes } from './gc.routes.js';
import { registerRepairRoutes } from './repair.routes.js';
import { registerNodeRoutes } from './node.routes.js';
import { registerP2pRoutes } from './p2p.routes.js';

export { FilesHttpError, mapFilesError } from './files.http.js';

export interface FilesListenerOptions {
  readonly config: FilesConfig;
  /** Interface the HTTP port binds to (the port is `config.serverPort`). */
  readonly host: string;
  readonly metrics?: HttpMetrics;
  /** The node's admission limiter, shared with the replication actor (nodeAdmission, made where the node is composed). */
  readonly admission: AdmissionLimiter;
  /** Sees the listener's route context once it is built (tests read `admission.snapshot()` through it). */
  readonly onContext?: (context: FilesRouteContext) => void;
}

/** `If-None-Match` against a strong ETag: exact, weak (`W/`) or `*`, in a comma list (notes A.3). */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const tag = part.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

export function filesServer(runtime: Runtime, options: FilesListenerOptions): HttpServer {
  const { config } = options;
  const logger = runtime.logger.child({ actor: 'files.http' });
  const server = new HttpServer({
    name: 'files',
    engine: config.httpEngine,
    host: options.host,
    port: config.serverPort,
    logger,
    clock: runtime.clock,
    metrics: options.metrics,
    mapError: mapFilesError,
    // spec §6: request logs hold method, masked route shape and status code.
    logRequests: true,
    // spec §8: a shutdown closes idle connections at 12 s and lets in-flight requests run into the 15 s deadline.
    inFlightOutlivesDrain: true,
    notFound: () => json(404, { error: 'Not found' }),
    cors: filesCors(config),
  });
  const context = filesRouteContext(server, runtime, config, options.admission, logger);
  options.onContext?.(context);
  const { admin } = context;
  const { content } = context.api;

  server.route('get', '/', () => ({ status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'IPFS node' }));

  const policyBody = JSON.stringify(storagePolicy(config));
  server.route('get', '/api/storage/policy', (request) =>
    withHeaders({ status: 200, headers: JSON_HEADERS, body: policyBody }, context.limitRate('read', context.clientKey(request))),
  );

  server.route(
    'post',
    '/api/file/upload',
    async (request, { signal }) => {
      // notes A.3 evaluation order: rate limit 429 → admission 429 → declared size 413 → disk reserve 507 → parse.
      let rate: Record<string, string>;
      try {
        rate = context.limitRate('upload', context.clientKey(request));
      } catch (error) {
        refuseUpload(request, error);
      }
      const release: Release =
        context.admission.tryUpload() ?? refuseUpload(request, new FilesHttpError(429, 'Too many concurrent uploads', { 'retry-after': ADMISSION_RETRY_AFTER_SECONDS }));
      // The slot is held until the answer is decided, whatever it is.
      try {
        const declared = request.headers['content-length'];
        if (declared !== undefined && Number(declared) > config.storage.maxRequestSizeBytes) refuseUpload(request, new FilesHttpError(413, 'Request too large'));
        // The disk reserve (507): the content actor claims the declared size, or the largest accepted request when
        // undeclared, before the body is read, and gives it back when the upload ended.
        const claimBytes = declared === undefined ? config.storage.maxRequestSizeBytes : Number(declared);
        const parts = new MultipartParts(request, config);
        let outcome: UploadOutcome;
        try {
          // The content actor runs the whole session; the body's deadlines bound it, not an ask timeout.
          outcome = await content({ type: 'upload.run', claimBytes, parts }, { signal, timeoutMs: Infinity });
        } catch (error) {
          // Refused before a byte was read (507): the body is dropped as it arrives.
          if (!parts.started) refuseUpload(request, error);
          throw error;
        }
        return withHeaders(json(200, uploadResult(outcome)), rate);
      } finally {
        release();
      }
    },
    { stream: { maxBytes: config.storage.maxRequestSizeBytes, deadlines: uploadDeadlines(config) } },
  );

  server.route('get', '/api/file/:cid', async (request, { signal }) => {
    // spec §4.2 429: read rate limit, then the per-client and global download slots.
    const client = context.clientKey(request);
    const rate = context.limitRate('read', client);
    const cid = parseCid(request.params[0]);
    const release = context.admission.tryDownload(client);
    if (!release) throw new FilesHttpError(429, 'Too many concurrent downloads', { 'retry-after': ADMISSION_RETRY_AFTER_SECONDS });
    // A client that leaves gives its slot back at once, even before (or instead of) the body streaming.
    signal.addEventListener('abort', release, { once: true });
    let streaming = false;
    try {
      // Availability first: a 304 is only answered once the content was found (spec §4.2).
      const opened = await content({ type: 'content.open', cid }, { signal });
      const etag = `"${opened.cid}"`;
      const cache = { etag, 'cache-control': 'private, max-age=3600, must-revalidate' };
      if (matchesEtag(request.headers['if-none-match'], etag)) return withHeaders({ status: 304, headers: cache }, rate);
      // The admission slot goes back once the body ends: complete, failed, or cut off by the client.
      const chunks = endingWith(opened.chunks(signal), release);
      streaming = true;
      return {
        status: 200,
        headers: {
          'content-type': 'application/octet-stream',
          'content-disposition': `attachment; filename="${opened.cid}"`,
          'x-content-type-options': 'nosniff',
          ...cache,
          'accept-ranges': 'none',
          ...rate,
        },
        stream: { length: opened.size, chunks },
      };
    } finally {
      // 304, 408, 500 before streaming: no body will hold the slot.
      if (!streaming) release();
    }
  });

  server.route('get', '/api/file/:cid/status', async (request, { signal }) => {
    // notes A.9: status reads count against the read rate limit, in the same bucket as downloads.
    const rate = context.limitRate('read', context.clientKey(request));
    const cid = parseCid(request.params[0]);
    return withHeaders(json(200, await content({ type: 'file.status', cid }, { signal })), rate);
  });

  for (const change of ['confirm', 'unpin'] as const) {
    server.route(
      'post',
      `/api/file/:cid/${change}`,
      admin(async (request, { signal }) => {
        const cid = parseCid(request.params[0]);
        return adminJson(200, await content({ type: 'file.change', cid, change }, { signal }));
      }),
    );
  }

  // Operator routes (spec §4.4), also under the original's /api/helia prefix for existing tooling.
  for (const prefix of ['/api/runtime', '/api/helia']) {
    server.route(
      'get',
      `${prefix}/pins`,
      admin(async (_request, { signal }) => adminJsonInPieces(200, { pins: await content({ type: 'pins.list' }, { signal }) })),
    );
    server.route(
      'post',
      `${prefix}/pin/:cid`,
      admin(async (request, { signal }) => {
        // notes A.9 pin rate limit, counted after the key check: only an operator can start the (costly)
        // fetch and pin, and a caller without the key never uses up the operator's budget.
        const rate = context.limitRate('pin', context.clientKey(request));
        const cid = parseCid(request.params[0]);
        await content({ type: 'pins.add', cid }, { signal });
        return withHeaders(adminJson(200, { pinned: true, cid: cid.toString() }), rate);
      }),
    );
    server.route(
      'get',
      `${prefix}/pins/isPinned/:cid`,
      admin(async (request, { signal }) => {
        const cid = parseCid(request.params[0]);
        return adminJson(200, { cid: cid.toString(), isPinned: await content({ type: 'pins.isPinned', cid }, { signal }) });
      }),
    );
  }

  // Node, storage and peer-network routes (one module each) register here.
  registerP2pRoutes(context);
  registerNodeRoutes(context);
  registerGcRoutes(context);
  registerRepairRoutes(context);

  return server;
}

/**
 * spec §5 and notes B.6: the configured origins, GET and POST, the two request headers a client sends (`content-type`
 * of an upload, `x-api-key`), no credentials, preflights cached 600 s. Exposed: what a browser app reads of a
 * download (its name and validator) and of a refusal (when to retry, the rate-limit fields).
 */
export function filesCors(config: FilesConfig): CorsPolicy {
  return new CorsPolicy({
    allowedOrigins: config.cors.allowedOrigins,
    methods: ['GET', 'POST'],
    allowHeaders: ['content-type', 'x-api-key'],
    exposeHeaders: ['content-disposition', 'etag', 'retry-after', 'ratelimit', 'ratelimit-policy'],
    maxAgeSeconds: 600,
  });
}

/** An upload body's deadlines (config keys `upload*`, README): the edge's, not uWS's fixed 10 s idle timer. */
export function uploadDeadlines(config: FilesConfig): BodyDeadlines {
  return {
    idleMs: config.uploadIdleTimeout,
    totalMs: config.uploadMaxDurationMs,
    floorBytes: config.uploadMinBytes,
    floorWindowMs: config.uploadMinBytesWindowMs,
  };
}

/**
 * Refuses an upload before its body is parsed. The body is dropped as it arrives instead of piling up in
 * the request stream's buffer, so a refused request costs no memory however large it is.
 */
function refuseUpload(request: HttpRequest, error: unknown): never {
  request.bodyStream?.destroy();
  throw error;
}

/**
 * The files of a multipart upload body, streamed through busboy one after another as the content actor reads them
 * (spec §4.2): parts must be files named `files`; counts and sizes are bounded while parsing. Parsing starts at the
 * first read (after the disk claim). A refusal keeps draining the body, so the client gets the answer after
 * sending; every way a body can end (complete, cut off before its closing boundary, too large, too slow, the client
 * gone) settles the parse exactly once, and a failure is thrown only then, so the actor's rollback never races a
 * running import. The first failure decides the answer; later ones are its consequences.
 */
class MultipartParts implements UploadParts {
  #started = false;
  readonly #queue: Array<{ name: string; stream: Readable }> = [];
  /** The part handed out last: read to its end by the time the next is asked for. */
  #current: Readable | undefined;
  #handedOut = 0;
  #failure: Error | undefined;
  #stopped = false;
  #settled = false;
  readonly #ended = Promise.withResolvers<void>();
  /** File parts not yet ended: a failure of the body ends them too, so no import waits for bytes that never come. */
  readonly #openFiles = new Set<Readable>();
  #wake: (() => void) | undefined;

  constructor(
    private readonly request: HttpRequest,
    private readonly config: FilesConfig,
  ) {}

  /** Whether the body has been read from (a refusal before that drops the body instead of draining it). */
  get started(): boolean {
    return this.#started;
  }

  [Symbol.asyncIterator](): AsyncIterator<UploadPart> {
    return {
      next: () => this.#next(),
      return: async () => {
        await this.#drain();
        return { done: true, value: undefined };
      },
    };
  }

  async stop(reason: Error): Promise<Error> {
    this.#fail(reason);
    await this.#drain();
    return this.#failure!;
  }

  async #next(): Promise<IteratorResult<UploadPart>> {
    if (!this.#started) this.#start();
    if ((this.#current as { truncated?: boolean } | undefined)?.truncated) this.#fail(new FilesHttpError(400, 'File too large'));
    this.#current = undefined;
    for (;;) {
      if (this.#failure) {
        await this.#drain();
        throw this.#failure;
      }
      const part = this.#queue.shift();
      if (part) {
        this.#current = part.stream;
        this.#handedOut += 1;
        return { done: false, value: { name: part.name, content: part.stream } };
      }
      if (this.#settled) {
        if (this.#handedOut === 0) throw new FilesHttpError(400, 'No file uploaded');
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#wakeUp();
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#ended.resolve();
    this.#wakeUp();
  }

  /** No more parts are wanted: what arrives is read and dropped until the body ended. */
  async #drain(): Promise<void> {
    this.#stopped = true;
    for (const stream of [this.#current, ...this.#queue.map((part) => part.stream)]) if (stream && !stream.destroyed) stream.resume();
    this.#queue.length = 0;
    if (this.#started) await this.#ended.promise;
  }

  #start(): void {
    this.#started = true;
    const body = this.request.bodyStream!;
    // Destroyed while the handler awaited (client gone, body too large or too slow): no event will come any more.
    if (body.destroyed) {
      this.#fail(body.errored ?? new AbortedError('client disconnected'));
      return this.#settle();
    }
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: this.request.headers as Record<string, string>,
        limits: { files: this.config.maxFileCount, fileSize: this.config.uploadLimitSizeBytes, fields: 0 },
      });
    } catch {
      // Not multipart/form-data, or no boundary.
      this.#fail(new FilesHttpError(400, 'No file uploaded'));
      return this.#settle();
    }
    const malformed = () => new FilesHttpError(400, 'Malformed multipart body');
    parser.on('file', (field, stream, info) => {
      this.#openFiles.add(stream);
      stream.on('close', () => this.#openFiles.delete(stream));
      // A part cut off (the body ended inside it) errors at once, maybe before its import starts: the listener is
      // attached now, or Node would raise the error as uncaught and end the process.
      stream.on('error', () => this.#fail(malformed()));
      if (this.#failure || this.#stopped) return void stream.resume();
      if (field !== 'files') {
        this.#fail(new FilesHttpError(400, 'Unexpected field'));
        return void stream.resume();
      }
      this.#queue.push({ name: info.filename ?? '', stream });
      this.#wakeUp();
    });
    parser.on('field', () => this.#fail(new FilesHttpError(400, 'Unexpected field')));
    parser.on('fieldsLimit', () => this.#fail(new FilesHttpError(400, 'Unexpected field')));
    parser.on('filesLimit', () => this.#fail(new FilesHttpError(400, `File limit exceeded. Max ${this.config.maxFileCount} allowed.`)));
    parser.on('error', () => {
      this.#fail(malformed());
      this.#settle();
    });
    parser.on('close', () => this.#settle());
    body.on('error', (error) => {
      this.#fail(error);
      for (const stream of this.#openFiles) stream.destroy(error);
      parser.destroy(error);
      this.#settle();
    });
    body.pipe(parser);
  }
}

function uploadResult({ files: imported, committed }: UploadOutcome) {
  const files = imported.map((file, i) => ({
    cid: file.cid.toString(),
    name: file.name,
    state: committed.records[i]!.state,
    expiresAt: committed.records[i]!.expiresAt,
    replication: committed.reports[i]!,
  }));
  // spec §2.1: the top-level report repeats the first file's, for older clients.
  return { filesNames: imported.map((f) => f.name), cids: files.map((f) => f.cid), files, replication: files[0]!.replication };
}
