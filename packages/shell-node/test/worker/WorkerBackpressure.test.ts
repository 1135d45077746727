/**
 * The worker under the engine's backpressure: while the log's bytes waiting
 * for the disk are at `pendingBytesMax` (its syncs held here), the engine
 * refuses a claim or an end with `PendingFull` and does nothing. The worker
 * issues the same command again once the engine may have room: its claims
 * never halt over it, and a finished job's end is recorded, not lost.
 */
import { describe, expect, it } from "@effect/vitest";
import { Deferred, Effect } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import * as Worker from "../../src/worker/Worker.js";
import { holdingSyncs } from "../support/heldSyncs.js";
import { dataDirectory } from "../support/store.js";

// A filler of this size leaves less room than any record of a claim or an end.
const pendingBytesMax = 2_048;
const filler = { queue: "other", worker: "W", args: "x".repeat(1_950) };

const openEngine = Effect.gen(function* () {
  const dir = yield* dataDirectory;
  yield* Init.init(dir);
  return yield* Engine.open(dir, { pendingBytesMax });
});

/** Real time passing: the worker meets the full log again and again meanwhile. */
const pause = (ms: number) =>
  Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)));

/** Waits (real time, at most 10 s) until the job is `state`. */
const until = (engine: Engine.EngineService, jobId: number, state: string) =>
  Effect.gen(function* () {
    for (let tries = 0; tries < 1_000; tries++) {
      if ((yield* engine.job(jobId))?.state === state) return;
      yield* pause(10);
    }
    return yield* Effect.dieMessage(`job ${jobId} never became ${state}`);
  });

/**
 * Holds the log's syncs and fills its pending bytes: a first insert is taken for a write whose
 * sync is held, a second waits behind it (pending bytes count what no write has taken yet).
 */
const fillLog = (engine: Engine.EngineService, disk: ReturnType<typeof holdingSyncs>) =>
  Effect.gen(function* () {
    disk.hold();
    // A failing test must not leave the engine's close waiting for a held sync.
    yield* Effect.addFinalizer(() => Effect.sync(() => disk.release()));
    const written = engine.promises.insert(filler);
    while (disk.state.waiting === 0) yield* pause(1);
    const pending = engine.promises.insert(filler);
    return Promise.all([written, pending]);
  });

describe("the worker under the engine's backpressure", () => {
  it.scopedLive("claims again once the log has room, instead of halting", () => {
    const disk = holdingSyncs();
    return Effect.gen(function* () {
      const engine = yield* openEngine;
      const job = yield* engine.insert({ queue: "q", worker: "W", args: null });
      const filled = yield* fillLog(engine, disk);
      const events: Array<string> = [];
      yield* Worker.run(engine, {
        queues: { q: 1 },
        handlers: { W: async () => "done" },
        onEvent: (event) => events.push(event._tag),
      });
      yield* pause(150);
      // Every claim so far was refused PendingFull: nothing started, and the claims go on.
      expect(events).toEqual([]);
      expect((yield* engine.job(job.jobId))?.state).toBe("available");
      disk.release();
      yield* Effect.promise(() => filled);
      yield* until(engine, job.jobId, "completed");
      expect(events).toEqual(["Started", "Completed"]);
    }).pipe(Effect.provide(disk.layer));
  });

  it.scopedLive("records a finished job's end once the log has room, instead of losing it", () => {
    const disk = holdingSyncs();
    return Effect.gen(function* () {
      const engine = yield* openEngine;
      const job = yield* engine.insert({ queue: "q", worker: "W", args: null });
      const finish = yield* Deferred.make<void>();
      const events: Array<string> = [];
      yield* Worker.run(engine, {
        queues: { q: 1 },
        handlers: { W: () => Effect.runPromise(Deferred.await(finish)).then(() => "done") },
        onEvent: (event) => events.push(event._tag),
      });
      yield* until(engine, job.jobId, "executing");
      const filled = yield* fillLog(engine, disk);
      yield* Deferred.succeed(finish, undefined);
      yield* pause(150);
      // The completion was refused PendingFull each time: not recorded, and not given up.
      expect(events).toEqual(["Started"]);
      expect((yield* engine.job(job.jobId))?.state).toBe("executing");
      disk.release();
      yield* Effect.promise(() => filled);
      yield* until(engine, job.jobId, "completed");
      expect(events).toEqual(["Started", "Completed"]);
      expect((yield* engine.job(job.jobId))?.result?.value).toBe("done");
    }).pipe(Effect.provide(disk.layer));
  });
});
