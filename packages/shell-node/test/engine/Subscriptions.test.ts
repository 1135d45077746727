/**
 * Subscriptions deliver every committed domain event once, in log order, with its record's
 * sequence (a mutation's members flattened): from now, or from an earlier sequence read from the
 * log. A subscriber that does not keep up is bounded: its buffer never holds more than the limit,
 * and it reads what it missed from the log and loses nothing. Compaction's base records are no
 * events; a subscriber so far behind that compaction removed what it missed fails with Compacted.
 */
import { describe, expect, it } from "@effect/vitest";
import { Chunk, Effect, Fiber, Option, Stream } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import { catchUpPageRecords } from "../../src/engine/internal/subscriptions.js";
import * as Init from "../../src/store/Init.js";
import { dataDirectory, nodeDisk, scheduleDefinition } from "../support/store.js";

const job = (args: number) => ({ queue: "q", worker: "W", args });

const openEngine = (options: Engine.EngineOptions = {}) =>
  Effect.gen(function* () {
    const dir = yield* dataDirectory;
    yield* Init.init(dir);
    return yield* Engine.open(dir, { timers: false, ...options });
  });

const positions = (events: Iterable<Engine.Committed>) =>
  [...events].map((event) => `${event.sequence}.${event.member}:${event.event._tag}`);

/** Lets every fiber run until each waits on a durable write or a commit. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)));

describe("subscribe", () => {
  it.scoped("delivers each committed event once, in log order, mutations flattened", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      yield* engine.insert(job(0));
      const taking = yield* Effect.fork(Stream.runCollect(Stream.take(engine.subscribe(), 4)));
      yield* settle;
      yield* engine.insertMany([job(1), job(2)]);
      const [claimed] = yield* engine.claim("q");
      yield* engine.complete(claimed?.jobId ?? 0, "done");
      const events = yield* Fiber.join(taking);
      // From now: the first insert (sequence 1) is before the subscription.
      expect(positions(events)).toEqual([
        "2.0:JobInserted",
        "2.1:JobInserted",
        "3.0:JobStarted",
        "4.0:JobFinished",
      ]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("from an earlier sequence reads the log first, then joins the live batches", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      for (let index = 0; index < 5; index++) yield* engine.insert(job(index));
      const taking = yield* Effect.fork(
        Stream.runCollect(Stream.take(engine.subscribe({ from: 3 }), 5)),
      );
      yield* settle;
      yield* engine.insert(job(5));
      yield* engine.insert(job(6));
      const events = Chunk.toReadonlyArray(yield* Fiber.join(taking));
      expect(events.map((event) => event.sequence)).toEqual([3, 4, 5, 6, 7]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("bounds a slow subscriber and still loses nothing", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine({ subscriberBufferMax: 5 });
      const subscription = engine.promises.subscribe();
      // Held but not read while 60 events commit: it never holds more than 5 of them.
      for (let index = 0; index < 30; index++) {
        yield* engine.insertMany([job(index), job(index)]);
        expect((yield* engine.subscriberStats()).buffered).toBeLessThanOrEqual(5);
      }
      expect(yield* engine.subscriberStats()).toMatchObject({ subscribers: 1, behind: 30 });
      const seen: Array<string> = [];
      for (let index = 0; index < 60; index++) {
        const next = yield* Effect.promise(() => subscription.next());
        if (next.done !== true) seen.push(`${next.value.sequence}.${next.value.member}`);
      }
      subscription.close();
      expect(seen).toEqual(
        Array.from({ length: 30 }, (_, index) => [`${index + 1}.0`, `${index + 1}.1`]).flat(),
      );
      expect((yield* Effect.promise(() => subscription.next())).done).toBe(true);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("holds exactly its limit without falling back to the log", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine({ subscriberBufferMax: 4 });
      const subscription = engine.promises.subscribe();
      yield* engine.insertMany([job(0), job(1)]);
      yield* engine.insertMany([job(2), job(3)]);
      // Four events is the limit, not past it: they stay buffered.
      expect(yield* engine.subscriberStats()).toMatchObject({ buffered: 4, behind: 2 });
      yield* engine.insert(job(4));
      expect(yield* engine.subscriberStats()).toMatchObject({ buffered: 0, behind: 3 });
      subscription.close();
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("from a sequence not committed yet, delivers nothing before it", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      yield* engine.insert(job(0));
      const taking = yield* Effect.fork(
        Stream.runCollect(Stream.take(engine.subscribe({ from: 4 }), 2)),
      );
      yield* settle;
      for (let index = 1; index <= 4; index++) yield* engine.insert(job(index));
      const events = Chunk.toReadonlyArray(yield* Fiber.join(taking));
      expect(events.map((event) => event.sequence)).toEqual([4, 5]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("skips a compaction's base, and fails a subscriber compaction left behind", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      yield* engine.insert(job(0));
      const live = yield* Effect.fork(Stream.runCollect(Stream.take(engine.subscribe(), 2)));
      yield* settle;
      yield* engine.insert(job(1));
      yield* engine.compact(0);
      const inserted = yield* engine.insert(job(2));
      const events = Chunk.toReadonlyArray(yield* Fiber.join(live));
      expect(events.map((event) => event.event._tag)).toEqual(["JobInserted", "JobInserted"]);
      const last = events[events.length - 1];
      expect(last?.event._tag === "JobInserted" && last.event.jobId).toBe(inserted.jobId);
      const behind = yield* Effect.flip(Stream.runCollect(engine.subscribe({ from: 1 })));
      expect(behind._tag).toBe("Compacted");
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("fails a subscriber that had fallen back to the log when a compaction passes it", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine({ subscriberBufferMax: 2 });
      const subscription = engine.promises.subscribe();
      yield* engine.insertMany([job(0), job(1)]);
      // Past its limit: it reads the log from sequence 1 at its next take.
      yield* engine.insertMany([job(2), job(3)]);
      yield* engine.compact(0);
      yield* engine.insert(job(4));
      const missed = yield* Effect.flip(
        Effect.tryPromise({ try: () => subscription.next(), catch: (error) => error }),
      );
      expect(missed instanceof Error && missed.name).toBe("Compacted");
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped(
    "catching up a page and one record more, delivers that record with no commit after",
    () =>
      Effect.gen(function* () {
        const engine = yield* openEngine();
        const records = catchUpPageRecords + 1;
        yield* Effect.forEach(
          Array.from({ length: records }, (_, index) => index),
          (index) => engine.insert(job(index)),
          { concurrency: "unbounded", discard: true },
        );
        // Had it gone live one record short, the last take would wait for a commit that never comes.
        const events = yield* Stream.runCollect(
          Stream.take(engine.subscribe({ from: 1 }), records),
        );
        expect(Chunk.last(events).pipe(Option.map((event) => event.sequence))).toEqual(
          Option.some(records),
        );
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("from inside a base, starts after it: results and checkpoints are no events", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      yield* engine.insert(job(0));
      const [claimed] = yield* engine.claim("q");
      yield* engine.complete(claimed?.jobId ?? 0, "kept");
      yield* engine.registerSchedule("s", scheduleDefinition);
      // Everything is retained: the base holds the job, its result and the schedule's checkpoint.
      const report = yield* engine.compact(Number.MAX_SAFE_INTEGER);
      expect(report.baseRecordCount).toBe(3);
      const inserted = yield* engine.insert(job(1));
      const [afterBase] = yield* Stream.runCollect(
        Stream.take(engine.subscribe({ from: report.firstSequence }), 1),
      );
      expect(afterBase?.sequence).toBe(report.firstSequence + report.baseRecordCount);
      expect(afterBase?.event._tag === "JobInserted" && afterBase.event.jobId).toBe(inserted.jobId);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("ends every subscription when the engine closes", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const forever = yield* Effect.fork(Stream.runCollect(engine.subscribe()));
      yield* settle;
      yield* engine.close();
      expect(Chunk.size(yield* Fiber.join(forever))).toBe(0);
    }).pipe(Effect.provide(nodeDisk)),
  );
});
