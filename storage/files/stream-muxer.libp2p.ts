// The node's stream muxer: yamux, with the opening of an outbound stream made safe against a connection that closes in
// the same tick.
//
// @chainsafe/libp2p-yamux 8.0.1 (the newest release) sends a new outbound stream's SYN from a `queueMicrotask` in
// `onCreateStream`, so that the stream is registered before the peer's ACK can arrive. Nothing catches that callback:
// when the connection's write side closes between the stream's creation and the microtask (a peer restarting while
// bitswap or a replication opens a stream to it), the send throws `StreamStateError: Cannot write to a stream that is
// closing` outside any promise, and the uncaught exception ends the whole process. The faults suite saw exactly this
// (seed 7, a peer's restart). The guard catches that one send and aborts the stream with its error instead: whoever
// opened the stream gets the error from its next read or write, as from any stream on a closed connection.
import { yamux, type YamuxMuxerInit } from '@chainsafe/libp2p-yamux';
import type { MultiaddrConnection, StreamMuxerFactory } from '@libp2p/interface';

type YamuxFactory = ReturnType<ReturnType<typeof yamux>>;
type YamuxMuxer = ReturnType<YamuxFactory['createStreamMuxer']>;
type YamuxStream = ReturnType<YamuxMuxer['onCreateStream']>;

/** `yamux(init)` for libp2p's `streamMuxers`, each muxer's outbound streams guarded (see the top of this file). */
export function guardedYamux(init?: YamuxMuxerInit): () => StreamMuxerFactory<YamuxMuxer> {
  const makeFactory = yamux(init);
  return () => {
    const factory = makeFactory();
    const createStreamMuxer = factory.createStreamMuxer.bind(factory);
    factory.createStreamMuxer = (connection: MultiaddrConnection) => guardOutboundStreams(createStreamMuxer(connection));
    return factory;
  };
}

function guardOutboundStreams(muxer: YamuxMuxer): YamuxMuxer {
  const createStream = muxer.onCreateStream.bind(muxer);
  muxer.onCreateStream = (...args: Parameters<YamuxMuxer['onCreateStream']>) => guardFirstWindowUpdate(createStream(...args));
  return muxer;
}

/**
 * The first `sendWindowUpdate` of an outbound stream is the SYN sent from yamux's microtask; guard that call only, then
 * give the stream its own method back (later window updates run inside yamux's frame handling, which catches).
 */
function guardFirstWindowUpdate(stream: YamuxStream): YamuxStream {
  const sendWindowUpdate = stream.sendWindowUpdate;
  stream.sendWindowUpdate = () => {
    Reflect.deleteProperty(stream, 'sendWindowUpdate');
    try {
      sendWindowUpdate.call(stream);
    } catch (error) {
      stream.abort(error instanceof Error ? error : new Error(String(error)));
    }
  };
  return stream;
}
