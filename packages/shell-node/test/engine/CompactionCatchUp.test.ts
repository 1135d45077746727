// Proves that a compaction never writes a base that misses records its expected last sequence
// covers: an engine whose catch-up has learned another writer's head (the log's `refresh`) but
// not yet folded its records waits for that fold before it takes its state as the base (before
// 2026-12-03 it handed the log the log's last sequence with a state that lacked them, and the
// other writer's job was gone from the new base). Found by two engines compacting one
// PostgreSQL store at once (packages/log-postgres/test/EngineCompacted.test.ts). The other way
// round, a notice that the log moved while a compaction's body runs starts no catch-up then, but
// must not be lost: the catch-up runs once the compaction ends, and a parked claim wakes.
import { describe, expect, it } from "@effect/vitest";
import type { Event, Generation } from "@tay/core";
import { Deferred, Effect, Fiber } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import type * as Log from "../../src/log/Log.js";
import * as SharedLog from "../support/sharedLog.js";

/** An engine over a recovered writer of the shared log: no timers, no rescue. */
const served = <K extends Log.Kind>(recovered: Log.Recovered<Generation.Builder, K>) =>
  Engine.fromLog(recovered, { timers: false, rescueOnOpen: false });

describe("a compaction while a catch-up runs", () => {
  it.scopedLive(
    "waits for the catch-up to fold what it learned; the base then holds the other writer's job",
    () =>
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const gate = SharedLog.readGate();
        const compactions: Array<{ expected: number; base: ReadonlyArray<Event.Event> }> = [];
        const options = { beforeRead: gate.beforeRead, compactions };
        const engine = yield* Effect.flatMap(SharedLog.open(log, options), served);
        const other = yield* Effect.flatMap(SharedLog.open(log), served);
        yield* engine.insert({ queue: "q", worker: "W", args: "mine" });
        // The other writer's insert tells `engine`, whose catch-up refreshes, then reads (held).
        yield* other.insert({ queue: "q", worker: "W", args: "theirs" });
        yield* Effect.promise(() => gate.reached);
        const compaction = yield* Effect.fork(Effect.flip(engine.compact(0)));
        yield* Effect.sleep("30 millis");
        // Nothing offered to the log while the catch-up holds records it has not folded.
        expect(compactions).toEqual([]);
        gate.open();
        // The shared log records a compaction and refuses it (it does not compact).
        expect((yield* Fiber.join(compaction))._tag).toBe("CompactionConflict");
        expect(compactions.map((compaction) => compaction.expected)).toEqual([2]);
        const restated = JSON.stringify(compactions[0]?.base);
        for (const args of ["mine", "theirs"]) expect(restated).toContain(`"${args}"`);
      }),
  );
});

/** The shared log as a kind whose compaction succeeds (with an empty report). */
interface CompactingKind extends Omit<SharedLog.SharedKind, "compaction"> {
  readonly compaction: Record<string, never>;
}

/**
 * A writer of `log` whose compaction takes the base, waits until the test
 * releases it (`reached` once it waits), and succeeds: the records stay
 * where they are, as the shared log keeps them, while the engine goes on
 * from the base's fold.
 */
const heldCompaction = (log: SharedLog.Shared) =>
  Effect.gen(function* () {
    const recovered = yield* SharedLog.open(log);
    const reached = yield* Deferred.make<void>();
    const released = yield* Deferred.make<void>();
    const compacting: Log.Log<CompactingKind> = {
      ...recovered.log,
      compact: (base) =>
        Effect.gen(function* () {
          // The engine folds the base as the log takes it.
          Array.from(base);
          yield* Deferred.succeed(reached, undefined);
          yield* Deferred.await(released);
          return {};
        }),
    };
    const engine = yield* served({ ...recovered, log: compacting });
    return {
      engine,
      reached: Deferred.await(reached),
      release: Deferred.succeed(released, undefined),
    };
  });

describe("a notice that the log moved during a compaction's body", () => {
  it.scoped("starts the catch-up it asked for once the compaction ends: a parked claim wakes", () =>
    Effect.gen(function* () {
      const log = SharedLog.shared();
      const { engine, reached, release } = yield* heldCompaction(log);
      const other = yield* Effect.flatMap(SharedLog.open(log), served);
      const claim = engine.promises.nextJobs([{ queue: "q", limit: 1 }]);
      const compaction = yield* Effect.fork(engine.compact(0));
      yield* reached;
      // Told while the compaction suspends catch-ups: none starts now, one is owed.
      const job = yield* other.insert({ queue: "q", worker: "W", args: "theirs" });
      expect(engine.contention().catchUps).toBe(0);
      yield* release;
      yield* Fiber.join(compaction);
      expect(engine.contention().catchUps).toBe(1);
      const [started] = yield* Effect.promise(() => claim);
      expect(started?.jobId).toBe(job.jobId);
    }),
  );
});
