// A peer that leaves in the middle of an exchange (it restarts, its connection resets) fails the helia read that was
// asking it with one of libp2p's stream or connection errors. For a download that is not an answer about the file:
// another peer, or the same one back, may still send it. Issue 29, fault seed 7 on node:http: alpha answered a
// download with 500 ("UnexpectedEOFError: Unexpected EOF - stream closed while reading 0/1 bytes") while gamma, which
// it was asking, restarted; the spec's answer for a file not found in time is the 408 of the discovery deadline.

import { sleep, type Clock } from '../clock.js';

/** The names libp2p (@libp2p/interface, @libp2p/utils) gives the errors of a stream or connection that went away. */
const PEER_LOSS_ERROR_NAMES: ReadonlySet<string> = new Set([
  'UnexpectedEOFError',
  'StreamResetError',
  'StreamAbortedError',
  'StreamStateError',
  'ConnectionClosedError',
  'ConnectionClosingError',
  'MuxerClosedError',
]);

/** True for an error that says a peer went away mid-exchange, not that the content is missing or bad. */
export function isPeerLoss(error: unknown): boolean {
  return error instanceof Error && PEER_LOSS_ERROR_NAMES.has(error.name);
}

/**
 * How long a read waits before it asks again after a peer left: long enough that a read failing at once on every try
 * does not spin, short beside the discovery and idle deadlines (seconds) that bound the whole.
 */
export const PEER_LOSS_RETRY_MS = 250;

/**
 * `read()`'s answer, asked again (after PEER_LOSS_RETRY_MS) each time it fails because a peer went away, until
 * `signal` fires: then the signal's reason is thrown, so the caller's deadline decides the answer. Any other failure
 * is thrown as it is. Only for reads: a retried read must be harmless to repeat.
 */
export async function readAcrossPeerLoss<T>(clock: Clock, signal: AbortSignal, read: () => Promise<T>, onPeerLoss: (error: Error) => void): Promise<T> {
  for (;;) {
    try {
      return await read();
    } catch (error) {
      if (signal.aborted || !isPeerLoss(error)) throw error;
      onPeerLoss(error as Error);
      await sleep(clock, PEER_LOSS_RETRY_MS, signal);
    }
  }
}
