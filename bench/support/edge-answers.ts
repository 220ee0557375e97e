// The two answers of the edge benchmark (bench/edge.bench.ts), shared by the servers (bench/support/edge-server.ts)
// and the bench's check of what each server answers. A module of its own: the server script exits without its IPC
// channel, so the bench must not import it.

export const SMALL_PATH = '/small';
export const STREAM_PATH = '/stream';
export const SMALL_BODY = '{"ok":true,"n":1}';
export const SMALL_CONTENT_TYPE = 'application/json; charset=utf-8';
export const STREAM_CONTENT_TYPE = 'application/octet-stream';
export const STREAM_BYTES = 1024 * 1024;
export const STREAM_CHUNK_BYTES = 64 * 1024;

/** The streamed body: a fixed, non-uniform byte pattern (so a body cut or shifted somewhere is seen by the check). */
export function streamBody(): Buffer {
  const body = Buffer.allocUnsafe(STREAM_BYTES);
  for (let i = 0; i < STREAM_BYTES; i++) body[i] = (i * 31 + (i >> 8)) & 0xff;
  return body;
}
