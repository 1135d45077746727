/**
 * Writing the CLI's output to a Node stream with backpressure: the effect
 * ends once the stream took the text, or, when its buffer is full, once it
 * drained. `tay dump` streams a whole store's records; into a pipe whose
 * reader is slower (`tay dump DIR | gzip` on macOS, where pipes are
 * asynchronous), writes that never waited would hold every line in the
 * stream's buffer, which is what streaming the dump set out to avoid.
 */
import type { Writable } from "node:stream";
import * as Effect from "effect/Effect";

/** `(text) => effect` writing to `stream`, waiting for `drain` when its buffer is full. */
export const writeTo =
  (stream: Writable) =>
  (text: string): Effect.Effect<void> =>
    Effect.async<void>((resume) => {
      if (stream.write(text)) {
        resume(Effect.void);
        return;
      }
      // A stream that closes or fails instead of draining takes no more
      // output; the process's own handlers decide what that means (EPIPE
      // exits 0), so the write ends here either way.
      const done = () => {
        stream.off("drain", done);
        stream.off("close", done);
        stream.off("error", done);
        resume(Effect.void);
      };
      stream.on("drain", done);
      stream.on("close", done);
      stream.on("error", done);
    });
