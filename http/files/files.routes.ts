// The files node's HTTP contract (specs/files-node.md §4, §5, §7; notes A.1–A.5): the listener, file and
// operator pin routes here; node, storage and peer-network routes in their own modules, registered below.
// Content moves through the files actors (ask); the edge never touches helia, the blockstore or the registry.

import busboy from 'busboy';
import type { CID } from 'multiformats/cid';
import type { OpenedContent, UploadHandle } from '../../actors/files/content.actor.js';
import { FILES_CONTENT_ID } from '../../actors/files/tree.js';
import type { Runtime } from '../../actors/runtime.js';
import type { FilesConfig } from '../../src/files/config.js';
import type { FileStatus } from '../../src/files/lifecycle.js';
import { storagePolicy } from '../../src/files/policy.js';
import { localOnlyReport } from '../../src/files/report.js';
import type { FileRecord } from '../../src/files/types.js';
import type { HttpMetrics } from '../metrics.js';
import { HttpServer, PayloadTooLargeError, type HttpRequest } from '../server.js';
import { adminJson, FilesHttpError, filesRouteContext, json, JSON_HEADERS, mapFilesError, parseCid } from './files.http.js';

export { FilesHttpError, mapFilesError } from './files.http.js';

export interface FilesListenerOptions {
  readonly config: FilesConfig;
  /** Interface the HTTP port binds to (the port is `config.serverPort`). */
  readonly host: string;
  readonly metrics?: HttpMetrics;
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
    host: options.host,
    port: config.serverPort,
    logger,
    metrics: options.metrics,
    mapError: mapFilesError,
    // spec §6: request logs hold method, masked route shape and status code.
    logRequests: true,
    notFound: () => json(404, { error: 'Not found' }),
  });
  const context = filesRouteContext(server, runtime, config, logger);
  const { admin } = context;
  const ask = <T>(event: Record<string, unknown> & { type: string }, signal: AbortSignal) => context.ask<T>(FILES_CONTENT_ID, event, signal);

  server.route('get', '/', () => ({ status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'IPFS node' }));

  const policyBody = JSON.stringify(storagePolicy(config));
  server.route('get', '/api/storage/policy', () => ({ status: 200, headers: JSON_HEADERS, body: policyBody }));

  server.route(
    'post',
    '/api/file/upload',
    async (request, { signal }) => {
      const declared = request.headers['content-length'];
      if (declared !== undefined && Number(declared) > config.storage.maxRequestSizeBytes) throw new FilesHttpError(413, 'Request too large');
      const handle = await ask<UploadHandle>({ type: 'upload.begin' }, signal);
      try {
        const imported = await parseUpload(request, handle, config, signal);
        const records = await handle.commit(imported, signal);
        return json(200, uploadResult(imported, records, config));
      } catch (error) {
        await handle.rollback().catch((rollbackError: unknown) => logger.error({ err: rollbackError }, 'upload rollback failed'));
        throw error;
      }
    },
    { stream: { maxBytes: config.storage.maxRequestSizeBytes } },
  );

  server.route('get', '/api/file/:cid', async (request, { signal }) => {
    const cid = parseCid(request.params[0]);
    // Availability first: a 304 is only answered once the content was found (spec §4.2).
    const content = await ask<OpenedContent>({ type: 'content.open', cid }, signal);
    const etag = `"${content.cid}"`;
    const cache = { etag, 'cache-control': 'private, max-age=3600, must-revalidate' };
    if (matchesEtag(request.headers['if-none-match'], etag)) return { status: 304, headers: cache };
    return {
      status: 200,
      headers: {
        'content-type': 'application/octet-stream',
        'content-disposition': `attachment; filename="${content.cid}"`,
        'x-content-type-options': 'nosniff',
        ...cache,
        'accept-ranges': 'none',
      },
      stream: { length: content.size, chunks: content.chunks(signal) },
    };
  });

  server.route('get', '/api/file/:cid/status', async (request, { signal }) => {
    const cid = parseCid(request.params[0]);
    return json(200, await ask<FileStatus>({ type: 'file.status', cid }, signal));
  });

  for (const change of ['confirm', 'unpin'] as const) {
    server.route(
      'post',
      `/api/file/:cid/${change}`,
      admin(async (request, { signal }) => {
        const cid = parseCid(request.params[0]);
        return adminJson(200, await ask<FileStatus>({ type: 'file.change', cid, change }, signal));
      }),
    );
  }

  // Operator routes (spec §4.4), also under the original's /api/helia prefix for existing tooling.
  for (const prefix of ['/api/runtime', '/api/helia']) {
    server.route(
      'get',
      `${prefix}/pins`,
      admin(async (_request, { signal }) => adminJson(200, { pins: await ask({ type: 'pins.list' }, signal) })),
    );
    server.route(
      'post',
      `${prefix}/pin/:cid`,
      admin(async (request, { signal }) => {
        const cid = parseCid(request.params[0]);
        await ask<FileStatus>({ type: 'pins.add', cid }, signal);
        return adminJson(200, { pinned: true, cid: cid.toString() });
      }),
    );
    server.route(
      'get',
      `${prefix}/pins/isPinned/:cid`,
      admin(async (request, { signal }) => {
        const cid = parseCid(request.params[0]);
        return adminJson(200, { cid: cid.toString(), isPinned: await ask<boolean>({ type: 'pins.isPinned', cid }, signal) });
      }),
    );
  }

  // Node, storage and peer-network routes (one module each) register here.

  return server;
}

interface ImportedUpload {
  readonly name: string;
  readonly cid: CID;
  readonly dagBytes: number;
}

/**
 * Streams the multipart body through busboy into the upload session, one file after another (spec §4.2):
 * parts must be files named `files`; counts and sizes are bounded while parsing. Any refusal keeps
 * draining the body so the client gets the answer after sending.
 */
function parseUpload(request: HttpRequest, handle: UploadHandle, config: FilesConfig, signal: AbortSignal): Promise<ImportedUpload[]> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: request.headers as Record<string, string>,
        limits: { files: config.maxFileCount, fileSize: config.uploadLimitSizeBytes, fields: 0 },
      });
    } catch {
      reject(new FilesHttpError(400, 'No file uploaded'));
      return;
    }
    const imported: ImportedUpload[] = [];
    let failure: Error | undefined;
    let work: Promise<void> = Promise.resolve();
    const fail = (error: Error) => (failure ??= error);

    parser.on('file', (field, stream, info) => {
      if (failure) return void stream.resume();
      if (field !== 'files') {
        fail(new FilesHttpError(400, 'Unexpected field'));
        return void stream.resume();
      }
      work = work.then(async () => {
        if (failure) return void stream.resume();
        try {
          const file = await handle.importFile(stream, signal);
          if ((stream as { truncated?: boolean }).truncated) fail(new FilesHttpError(400, 'File too large'));
          else imported.push({ name: info.filename ?? '', cid: file.cid, dagBytes: file.dagBytes });
        } catch (error) {
          fail(error as Error);
          stream.resume();
        }
      });
    });
    parser.on('field', () => fail(new FilesHttpError(400, 'Unexpected field')));
    parser.on('fieldsLimit', () => fail(new FilesHttpError(400, 'Unexpected field')));
    parser.on('filesLimit', () => fail(new FilesHttpError(400, `File limit exceeded. Max ${config.maxFileCount} allowed.`)));
    parser.on('error', (error: Error) => {
      fail(error instanceof PayloadTooLargeError ? error : new FilesHttpError(400, 'Malformed multipart body'));
      resolveWhenDone();
    });
    parser.on('close', () => resolveWhenDone());
    const body = request.bodyStream!;
    body.on('error', (error) => {
      fail(error);
      parser.destroy(error);
      resolveWhenDone();
    });
    body.pipe(parser);

    let settled = false;
    function resolveWhenDone() {
      if (settled) return;
      settled = true;
      work.then(() => {
        if (failure) reject(failure);
        else if (imported.length === 0) reject(new FilesHttpError(400, 'No file uploaded'));
        else resolve(imported);
      }, reject);
    }
  });
}

function uploadResult(imported: readonly ImportedUpload[], records: readonly FileRecord[], config: FilesConfig) {
  // The fresh placement tier's copies; one (this node) when replication is disabled.
  const desiredCopies = config.replication.enabled ? (config.replication.placement[0]?.copies ?? 1) : 1;
  const report = localOnlyReport(desiredCopies, config.replication.ackQuorum);
  const files = imported.map((file, i) => ({
    cid: file.cid.toString(),
    name: file.name,
    state: records[i]!.state,
    expiresAt: records[i]!.expiresAt,
    replication: report,
  }));
  return { filesNames: imported.map((f) => f.name), cids: files.map((f) => f.cid), files, replication: files[0]!.replication };
}
