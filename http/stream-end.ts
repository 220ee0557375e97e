// A streamed answer's body that says when the edge is done with it: read to its end, failed, or returned early (the
// edge calls `return()` on every stream it started when it stops reading: the body complete, cut off, or the client
// gone; also for an empty body it never reads). What is held for the answer's lifetime is given back there: a
// download's admission slot, a GC report's packed pages.

/**
 * `chunks`, calling `ended` once when they end in any of those ways. A generator's own `finally` would not do:
 * `return()` on a generator not yet started ends it without running its body.
 */
export function endingWith(chunks: AsyncIterable<Uint8Array>, ended: () => void): AsyncIterable<Uint8Array> {
  let open = true;
  const end = () => {
    if (open) {
      open = false;
      ended();
    }
  };
  return {
    [Symbol.asyncIterator]() {
      const source = chunks[Symbol.asyncIterator]();
      return {
        async next() {
          try {
            const result = await source.next();
            if (result.done) end();
            return result;
          } catch (error) {
            end();
            throw error;
          }
        },
        async return(value?: unknown) {
          try {
            return (await source.return?.(value)) ?? { done: true, value: undefined };
          } finally {
            end();
          }
        },
      };
    },
  };
}
