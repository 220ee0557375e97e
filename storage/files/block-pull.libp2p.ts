// The block pull protocol over libp2p (BLOCKS_PROTOCOL in src/files/wire.ts, frames in src/files/block-frames.ts):
// a replica pulls the whole DAG of a copy from the member that asked for the copy, over ONE stream.
//
// The serving side (`blockServer`) reads one request `{cid}`, walks that DAG from its own block files (never from
// the network: a block it lacks ends the stream with a `notFound` refusal) breadth first, a parent always before its
// children, with BLOCK_READ_AHEAD blocks read ahead, and sends each block as a frame, waiting for the stream to drain
// whenever it is full. The pulling side (`pullBlocks`) checks every block before anything is written (the verifier,
// src/files/block-verifier.ts), writes the verified ones WRITES_IN_FLIGHT at a time, and pauses the stream while
// blocks wait for their check or write, so the sender is held back by yamux's window instead of filling memory.
//
// Measured against bitswap (issue 29 item 4): bitswap opened a stream per message (want-lists, blocks, cancels, each
// a multistream-select, a yamux SYN and a peer-store merge), copied every block into a protobuf message on the way
// out, through it-to-buffer in its ledger, and once more when the receiver gathered the message.

import type { Libp2p, PeerId, Stream, StreamCloseEvent, StreamHandler, StreamMessageEvent } from '@libp2p/interface';
import { CID } from 'multiformats/cid';
import { code as RAW_CODEC } from 'multiformats/codecs/raw';
import { BlockBodyPool, BlockFrameDecoder, blockFrameHead, MAX_BLOCK_BYTES, refusalFrame, type BlockFrame, type BlocksRefusalCode } from '../../src/files/block-frames.js';
import { BlockVerifier, type LinksOf } from '../../src/files/block-verifier.js';
import { deadline, type Clock } from '../../src/clock.js';
import { BLOCKS_MAX_REQUEST_BYTES, BLOCKS_PROTOCOL, encodeFrame, parseBlocksRequest, ProtocolMessageError } from '../../src/files/wire.js';
import { readFrame } from './protocol-stream.libp2p.js';

/** Blocks the server reads ahead of the one it sends (1 MiB each: this bounds a stream's memory on the sender). */
const BLOCK_READ_AHEAD = 4;
/** Verified blocks being written at once on the pulling side. */
const WRITES_IN_FLIGHT = 4;
/** Frames received and not yet written at which the pulling side pauses the stream (resumed at half). */
const PAUSE_AT_FRAMES = 8;
/** Leaf bodies a pull keeps for reuse: about what it holds at once (frames waiting, writes in flight). */
const REUSED_BODIES = PAUSE_AT_FRAMES + WRITES_IN_FLIGHT;
/**
 * While paused, the sender may still fill the window yamux already granted it: up to yamux's largest stream window
 * (16 MiB, @chainsafe/libp2p-yamux MAX_STREAM_WINDOW). And a resume grants the whole window again at once, counting
 * the bytes still buffered here as consumed: when the buffer's first frames pause the stream again, the rest of
 * the buffer (up to one window) waits in front of a fresh window's worth (measured: 17.8 MiB buffered for a 64 MiB
 * copy). libp2p resets a stream whose paused buffer passes `maxReadBufferLength` (4 MiB by default), so a pulling
 * stream allows two windows and a block. That is the bound of what a slow writer here may buffer per copy.
 */
const PAUSED_READ_BUFFER_BYTES = 2 * 16 * 1024 * 1024 + MAX_BLOCK_BYTES;

/** The serving peer refused the pull (or stopped serving it), with its code. */
export class BlocksRefusedError extends Error {
  static readonly NAME = 'BlocksRefusedError';
  override readonly name = BlocksRefusedError.NAME;
  constructor(readonly code: string) {
    super(`the peer refused to send the blocks (${code})`);
  }
}

/** The stream ended (cleanly or not) before every block of the DAG arrived. */
export class BlockStreamEndedError extends Error {
  static readonly NAME = 'BlockStreamEndedError';
  override readonly name = BlockStreamEndedError.NAME;
}

/** The identity multihash: the block is the CID's own digest. */
const IDENTITY_HASH = 0x00;

const pieces = (data: Uint8Array | Iterable<Uint8Array>): Iterable<Uint8Array> => (data instanceof Uint8Array ? [data] : data);

// ---------------------------------------------------------------------------------------------------------------
// The serving side

export interface BlockServerOptions {
  /** One block of this node, whole, from its own storage; rejects with a `NotFoundError` when it is not held here. */
  read(cid: CID, signal: AbortSignal): Promise<Uint8Array>;
  readonly linksOf: LinksOf;
  /** Whether the peer (its id proven by the handshake) may pull from this node. */
  authorized(peerId: string): boolean;
  /** A slot for one stream being served, undefined at the bound; the release is called once. */
  trySlot(): (() => void) | undefined;
  /** The bound of one stream, from its request to its last block. */
  readonly timeoutMs: number;
  readonly clock: Clock;
  /** Ends every stream in progress (the owner stopped). */
  readonly lifetime: AbortSignal;
  onError(error: unknown): void;
}

/** Sends `frame` and waits while the stream's buffer is full. */
async function send(stream: Stream, frame: Uint8Array, signal: AbortSignal): Promise<void> {
  if (!stream.send(frame)) await stream.onDrain({ signal });
}

/**
 * Sends every block of the DAG under `root` once, breadth first (a block after the block that links to it), reading
 * up to BLOCK_READ_AHEAD blocks ahead. An identity CID's block is inside the CID: never read, never sent.
 */
async function sendDag(stream: Stream, root: CID, options: BlockServerOptions, signal: AbortSignal): Promise<void> {
  const order: CID[] = [root];
  const seen = new Set<string>([root.toString()]);
  const reads = new Map<number, Promise<Uint8Array>>();
  let next = 0;
  let started = 0;
  while (next < order.length) {
    while (started < order.length && started - next < BLOCK_READ_AHEAD) {
      const read = options.read(order[started]!, signal);
      read.catch(() => {});
      reads.set(started++, read);
    }
    const cid = order[next]!;
    const bytes = await reads.get(next)!;
    reads.delete(next++);
    await send(stream, blockFrameHead(cid.bytes, bytes.length), signal);
    await send(stream, bytes, signal);
    for (const link of await options.linksOf(cid, bytes)) {
      const key = link.toString();
      if (link.multihash.code === IDENTITY_HASH || seen.has(key)) continue;
      seen.add(key);
      order.push(link);
    }
  }
}

export function blockServer(options: BlockServerOptions): StreamHandler {
  return (stream, connection) => {
    const gone = new AbortController();
    stream.addEventListener('close', () => gone.abort(new Error('stream closed')), { once: true });
    const bound = deadline(options.clock, options.timeoutMs, gone.signal, options.lifetime);
    const signal = bound.signal;
    const refuse = async (code: BlocksRefusalCode) => {
      await send(stream, refusalFrame(code), signal);
      await stream.close({ signal });
    };
    void (async () => {
      let release: (() => void) | undefined;
      try {
        let root: CID;
        try {
          root = CID.parse(parseBlocksRequest(await readFrame(stream, BLOCKS_MAX_REQUEST_BYTES, signal)).cid);
        } catch (error) {
          if (signal.aborted || (error as Error).name !== ProtocolMessageError.NAME) throw error;
          return await refuse('invalid');
        }
        if (!options.authorized(connection.remotePeer.toString())) return await refuse('unauthorized');
        release = options.trySlot();
        if (!release) return await refuse('busy');
        try {
          await sendDag(stream, root, options, signal);
        } catch (error) {
          if (signal.aborted || (error as Error).name !== 'NotFoundError') throw error;
          return await refuse('notFound');
        }
        await stream.close({ signal });
      } catch (error) {
        stream.abort(error as Error);
        options.onError(error);
      } finally {
        release?.();
        bound.clear();
      }
    })();
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The pulling side

export interface PullOptions {
  readonly linksOf: LinksOf;
  /**
   * Writes one verified block (a block already held may be skipped). It must keep no reference to a raw block's
   * bytes once it resolved: the pull reuses them for a later block.
   */
  write(cid: CID, bytes: Uint8Array, signal: AbortSignal): Promise<void>;
  readonly signal: AbortSignal;
}

export interface PullResult {
  readonly blocks: number;
  readonly bytes: number;
}

/**
 * Pulls every block of the DAG under `root` from `source` over BLOCKS_PROTOCOL and writes each once verified.
 * Resolves when all are written; rejects (after the writes in flight settled, with the stream aborted) on a dial
 * failure (the peer does not offer the protocol, for one), a refusal (BlocksRefusedError), a protocol violation or
 * a block that fails its check (ProtocolMessageError and its UnverifiedBlockError), a stream that ends early
 * (BlockStreamEndedError or the stream's own error), a failed write, or the signal. Nothing unverified is written.
 */
export async function pullBlocks(libp2p: Libp2p, source: PeerId, root: CID, options: PullOptions): Promise<PullResult> {
  const { signal } = options;
  const verifier = new BlockVerifier(root, options.linksOf);
  if (verifier.complete) return { blocks: 0, bytes: 0 };
  const stream = await libp2p.dialProtocol(source, BLOCKS_PROTOCOL, { signal });
  stream.maxReadBufferLength = Math.max(stream.maxReadBufferLength, PAUSED_READ_BUFFER_BYTES);
  return new Promise<PullResult>((resolve, reject) => {
    const bodies = new BlockBodyPool(REUSED_BODIES);
    const decoder = new BlockFrameDecoder((bytes) => bodies.take(bytes));
    const writes = new Set<Promise<void>>();
    /** Frames are checked one after another, in the order they arrived. */
    let checked: Promise<void> = Promise.resolve();
    /** Frames received and not yet handed to a write. */
    let backlog = 0;
    let paused = false;
    let settled = false;

    const detach = () => {
      stream.removeEventListener('message', onMessage);
      stream.removeEventListener('end', onEnd);
      stream.removeEventListener('close', onClose);
      signal.removeEventListener('abort', onAbort);
    };
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      detach();
      stream.abort(error instanceof Error ? error : new Error(String(error)));
      void Promise.allSettled([...writes]).then(() => reject(error));
    };
    const succeed = () => {
      if (settled) return;
      settled = true;
      detach();
      // Our end closes; the server has closed its own after the last block (or does so now).
      stream.close({ signal }).catch((error: unknown) => stream.abort(error as Error));
      resolve({ blocks: verifier.blocks, bytes: verifier.bytes });
    };
    const finishIfDone = () => {
      if (!settled && verifier.complete && backlog === 0 && writes.size === 0) succeed();
    };

    // libp2p refuses to pause or resume a readable end that is closing or closed: the server's last bytes have
    // arrived (all of them were dispatched, and 'end' follows), so there is nothing left to hold back or let through.
    const pause = () => {
      if (stream.readStatus === 'readable') stream.pause();
    };
    const resume = () => {
      if (stream.readStatus === 'paused') stream.resume();
    };

    const handle = async (frame: BlockFrame): Promise<void> => {
      if (frame.kind === 'refusal') throw new BlocksRefusedError(frame.code);
      const cid = await verifier.accept(frame.cid, frame.bytes);
      while (writes.size >= WRITES_IN_FLIGHT) await Promise.race(writes);
      if (settled) return;
      const write = options.write(cid, frame.bytes, signal).then(
        () => {
          writes.delete(write);
          // Written: a raw leaf's body can take the next leaf (PullOptions.write keeps no reference to it).
          if (cid.code === RAW_CODEC) bodies.give(frame.bytes);
          finishIfDone();
        },
        (error: unknown) => {
          writes.delete(write);
          fail(error);
        },
      );
      writes.add(write);
    };
    const onMessage = (event: StreamMessageEvent) => {
      if (settled) return;
      let frames: BlockFrame[] = [];
      try {
        for (const piece of pieces(event.data)) frames = frames.concat(decoder.push(piece));
      } catch (error) {
        return fail(error);
      }
      for (const frame of frames) {
        backlog++;
        checked = checked
          .then(() => (settled ? undefined : handle(frame)))
          .then(() => {
            backlog--;
            if (paused && backlog <= PAUSE_AT_FRAMES / 2) {
              paused = false;
              resume();
            }
            finishIfDone();
          })
          .catch(fail);
      }
      if (!paused && backlog >= PAUSE_AT_FRAMES) {
        paused = true;
        pause();
      }
    };
    // Everything the server sent has been read: once the frames still being checked and written are done, the DAG
    // must be complete.
    const onEnd = () => {
      checked = checked
        .then(() => Promise.allSettled([...writes]))
        .then(() => {
          if (!verifier.complete) fail(new BlockStreamEndedError('the stream ended before every block arrived'));
          else finishIfDone();
        });
    };
    const onClose = (event: StreamCloseEvent) => {
      if (event.error) return fail(event.error);
      onEnd();
    };
    const onAbort = () => fail(signal.reason instanceof Error ? signal.reason : new Error('aborted'));

    if (signal.aborted) return onAbort();
    stream.addEventListener('message', onMessage);
    stream.addEventListener('end', onEnd);
    stream.addEventListener('close', onClose);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      stream.send(encodeFrame({ cid: root.toString() }, BLOCKS_MAX_REQUEST_BYTES));
    } catch (error) {
      fail(error);
    }
  });
}
