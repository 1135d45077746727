/**
 * An engine's `lost` (WorkerEngine: a remote lease found gone, which no
 * commit the watch shows tells) aborts the running handler of exactly that
 * attempt: a loss told of another attempt of the same job aborts nothing.
 * The worker records nothing for an attempt aborted so (it is no longer
 * its own), so the job stays as the engine holds it.
 *
 * A job whose attempt ended where the worker's watch could not see it (a
 * remote server restarted and rescued it) can be claimed again while the
 * old handler runs: both attempts are held, the old one aborted when lost
 * and at a close. Until 2026-12-07 the new attempt took the old one's place
 * (kept by job id alone): the old handler was aborted by nothing, and a
 * close waited for it for ever.
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

  /**
   * A worker on `engine` whose watch shows nothing (as a remote worker's shows no rescue of a
   * restarted server), with a `Slow` handler that runs until aborted (or 2 s); the job's attempt 1 is
   * then ended behind its back (failed, retried at once) and claimed again as attempt 2.
   */
  const claimedTwice = (closeTimeoutMs: number) =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      const engine = yield* Engine.open(dir);
      let tell: (jobId: number, attempt: number) => void = () => {};
      const started: Array<number> = [];
      const aborted: Array<string> = [];
      const worker = yield* Worker.run(
        {
          ...engine,
          watch: () => () => {},
          lost: (listener) => {
            tell = listener;
            return () => {};
          },
        },
        {
          queues: { q: 2 },
          closeTimeoutMs,
          handlers: {
            Slow: (job, { signal }) =>
              new Promise((resolve) => {
                started.push(job.attempt);
                signal.addEventListener("abort", () => {
                  aborted.push(`${job.attempt}: ${String(signal.reason)}`);
                  resolve("aborted");
                });
                // Never aborted, it ends after all: a test of the bug fails instead of hanging.
                setTimeout(() => resolve("ran out"), 2_000);
              }),
          },
        },
      );
      const job = yield* engine.insert({ queue: "q", worker: "Slow", args: null });
      while (started.length < 1) yield* pause(10);
      yield* engine.fail(job.jobId, "rescued", {
        attempt: 1,
        backoff: { baseMs: 1, factor: 1, capMs: 1 },
      });
      while (started.length < 2) yield* pause(10);
      return {
        engine,
        worker,
        jobId: job.jobId,
        tell: (attempt: number) => tell(job.jobId, attempt),
        started,
        aborted,
      };
    });

  it.scopedLive("aborts the older of two attempts of one job held, when that one is lost", () =>
    Effect.gen(function* () {
      const { tell, started, aborted } = yield* claimedTwice(100);
      expect(started).toEqual([1, 2]);
      tell(1);
      yield* pause(50);
      expect(aborted).toHaveLength(1);
      expect(aborted[0]).toMatch(/^1: .*ended/);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("aborts both attempts of one job held at a close", () =>
    Effect.gen(function* () {
      const { worker, aborted } = yield* claimedTwice(50);
      const report = yield* worker.close({ timeoutMs: 50 });
      expect(report).toEqual({ finished: 0, interrupted: 2 });
      expect([...aborted].sort()).toEqual([
        expect.stringMatching(/^1: .*interrupted/),
        expect.stringMatching(/^2: .*interrupted/),
      ]);
    }).pipe(Effect.provide(nodeDisk)),
  );
});
