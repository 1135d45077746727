/**
 * An engine's `lost` (WorkerEngine: a remote lease found gone, which no
 * commit the watch shows tells) aborts the running handler of exactly that
 * attempt: a loss told of another attempt of the same job aborts nothing.
 * The worker records nothing for an attempt aborted so (it is no longer
 * its own), so the job stays as the engine holds it.
 */
import { describe, expect, it } from "@effect/vitest";
import { Deferred, Effect } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import * as Worker from "../../src/worker/Worker.js";
import { dataDirectory, nodeDisk } from "../support/store.js";

/** Real time passing. */
const pause = (ms: number) =>
  Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)));

describe("a lost attempt", () => {
  it.scopedLive("aborts that attempt's handler, and no other attempt's", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      const engine = yield* Engine.open(dir);
      let tell: ((jobId: number, attempt: number) => void) | undefined;
      const aborted = yield* Deferred.make<string>();
      const started = yield* Deferred.make<number>();
      yield* Worker.run(
        {
          ...engine,
          lost: (listener) => {
            tell = listener;
            return () => {
              tell = undefined;
            };
          },
        },
        {
          queues: { q: 1 },
          closeTimeoutMs: 100,
          handlers: {
            Slow: (job, { signal }) =>
              new Promise((resolve) => {
                Deferred.unsafeDone(started, Effect.succeed(job.attempt));
                signal.addEventListener("abort", () => {
                  Deferred.unsafeDone(aborted, Effect.succeed(String(signal.reason)));
                  resolve("aborted");
                });
              }),
          },
        },
      );
      const job = yield* engine.insert({ queue: "q", worker: "Slow", args: null });
      const attempt = yield* Deferred.await(started);
      tell?.(job.jobId, attempt + 1);
      yield* pause(50);
      expect(yield* Deferred.isDone(aborted)).toBe(false);
      tell?.(job.jobId, attempt);
      expect(yield* Deferred.await(aborted)).toContain("ended");
      yield* pause(50);
      expect((yield* engine.job(job.jobId))?.state).toBe("executing");
    }).pipe(Effect.provide(nodeDisk)),
  );
});
