// One framed request and one framed response over a libp2p stream (src/files/wire.ts framing; notes C24), for both
// peer protocols. The asking side dials, sends, reads the answer and closes; the answering side reads, answers and
// closes. Everything is bounded by the caller's signal, and a frame above the protocol's bound aborts the stream.

import type { Libp2p, Stream, StreamHandler } from '@libp2p/interface';
import type { Multiaddr } from '@multiformats/multiaddr';
import { encodeFrame, FrameDecoder, ProtocolMessageError } from '../../src/files/wire.js';
import { deadline, type Clock } from '../../src/clock.js';

/** Reads exactly one frame; rejects on a violation, a stream closed before the frame ended, or the signal. */
export function readFrame(stream: Stream, maxBytes: number, signal: AbortSignal): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    const decoder = new FrameDecoder(maxBytes);
    const cleanup = () => {
      stream.removeEventListener('message', onMessage);
      stream.removeEventListener('close', onClose);
      stream.removeEventListener('remoteCloseWrite', onClose);
      signal.removeEventListener('abort', onAbort);
    };
    const fail = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onMessage = (event: { data: Uint8Array | { subarray(): Uint8Array } }) => {
      try {
        const data = event.data instanceof Uint8Array ? event.data : event.data.subarray();
        const message = decoder.push(data);
        if (message === undefined) return;
        cleanup();
        resolve(message);
      } catch (error) {
        fail(error as Error);
      }
    };
    const onClose = () => fail(new ProtocolMessageError('stream ended before a whole frame'));
    const onAbort = () => fail(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) return onAbort();
    stream.addEventListener('message', onMessage);
    stream.addEventListener('close', onClose);
    stream.addEventListener('remoteCloseWrite', onClose);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Sends one frame and closes this end for writing. */
export async function writeFrame(stream: Stream, message: unknown, maxBytes: number, signal: AbortSignal): Promise<void> {
  if (!stream.send(encodeFrame(message, maxBytes))) await stream.onDrain({ signal });
  await stream.close({ signal });
}

/** Asks one peer: dial the protocol, send `request`, read and return the raw answer (the caller parses it). */
export async function askPeer(libp2p: Libp2p, target: Multiaddr, protocol: string, request: unknown, maxBytes: number, signal: AbortSignal): Promise<unknown> {
  const stream = await libp2p.dialProtocol(target, protocol, { signal });
  // The answer's listener is attached before the request leaves, so a quick answer is never missed; when the
  // request fails to leave, the answer's own rejection (the abort below) is expected and not left unhandled.
  const answer = readFrame(stream, maxBytes, signal);
  answer.catch(() => {});
  try {
    await writeFrame(stream, request, maxBytes, signal);
    return await answer;
  } catch (error) {
    stream.abort(error as Error);
    throw error;
  }
}

/**
 * A handler that reads one request, lets `answer` decide (with the remote peer's id, proven by the handshake) and
 * writes the reply, all within `timeoutMs` on `clock`. A violation or a failure aborts the stream and goes to `onError`.
 */
export function frameHandler(
  maxBytes: number,
  timeoutMs: number,
  clock: Clock,
  answer: (request: unknown, remotePeer: string, signal: AbortSignal) => Promise<unknown>,
  onError: (error: unknown) => void,
): StreamHandler {
  return (stream, connection) => {
    // The answer's work ends at the bound or when the asker goes away (its slot is not held for a dead stream).
    const gone = new AbortController();
    stream.addEventListener('close', () => gone.abort(new Error('stream closed')), { once: true });
    const bound = deadline(clock, timeoutMs, gone.signal);
    void (async () => {
      try {
        const request = await readFrame(stream, maxBytes, bound.signal);
        const reply = await answer(request, connection.remotePeer.toString(), bound.signal);
        await writeFrame(stream, reply, maxBytes, bound.signal);
      } catch (error) {
        stream.abort(error as Error);
        onError(error);
      } finally {
        bound.clear();
      }
    })();
  };
}

const protocolChanges = new WeakMap<Libp2p, Promise<void>>();

/**
 * Runs `change` (a handle or unhandle) after every earlier change of `libp2p`'s protocol handlers. An actor that
 * restarts on the same node stops (unhandle) before it starts again (handle); both are asynchronous, and without
 * this order the old unhandle could land after the new handle and silently remove it.
 */
export function changeProtocols(libp2p: Libp2p, change: () => Promise<void>): Promise<void> {
  const next = (protocolChanges.get(libp2p) ?? Promise.resolve()).then(change);
  protocolChanges.set(
    libp2p,
    next.catch(() => {}),
  );
  return next;
}
