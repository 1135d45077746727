// Proves the engine's command queue is bounded: past `queuedCommandsMax` commands waiting to be
// decided, one more is refused at once with Overloaded (its message names the limit) and appends
// nothing, `room()` waits until the queue drains, the bound holds while a compaction holds the
// queue, and a claim given up before it was issued takes no place in it. The commands are issued
// in one turn (a drain is a microtask) or while a compaction is held inside its first directory
// creation on a wrapped fault disk.
import { getEventListeners } from "node:events";
import { describe, expect, it } from "@effect/vitest";
import { Deferred, Effect, Fiber, type Scope } from "effect";
import type { Disk, DiskService } from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";

const directory = "/data";
const job = (args: number) => ({ queue: "q", worker: "W", args });

const withDisk = (disk: DiskService) => Effect.provide(FaultDisk.layer(disk));

/**
 * A disk whose compaction's first step of its own (mkdir epochs/E+1) waits
 * for `release` while `hold.on`, telling `reached` first: a compaction that
 * holds the command queue for as long as a test wants.
 */
const compactionGate = Effect.gen(function* () {
  const inner = FaultDisk.make();
  const reached = yield* Deferred.make<void>();
  const release = yield* Deferred.make<void>();
  const hold = { on: false };
  const disk: DiskService = {
    ...inner,
    makeDirectory: (path) =>
      hold.on
        ? Effect.zipRight(
            Effect.zipRight(Deferred.succeed(reached, undefined), Deferred.await(release)),
            inner.makeDirectory(path),
          )
        : inner.makeDirectory(path),
  };
  return { disk, reached, release, hold };
});

/** An engine bounded at two commands whose compaction, forked, holds its queue behind `gate`. */
const queueHeld = (gate: Effect.Effect.Success<typeof compactionGate>) =>
  Effect.gen(function* () {
    const engine = yield* Engine.open(directory, { timers: false, queuedCommandsMax: 2 });
    gate.hold.on = true;
    const compaction = yield* Effect.fork(engine.compact(0));
    yield* Deferred.await(gate.reached);
    // Lets the compaction go on, and waits for its end.
    const release = Effect.gen(function* () {
      gate.hold.on = false;
      yield* Deferred.succeed(gate.release, undefined);
      yield* Fiber.join(compaction);
    });
    return { engine, release };
  });

/**
 * Runs `body` on a fresh store with an engine whose queue a compaction
 * holds (`queueHeld`), then `after` on the same disk once that engine's
 * scope has closed.
 */
const whileQueueHeld = <E1, E2>(
  body: (
    held: Effect.Effect.Success<ReturnType<typeof queueHeld>>,
  ) => Effect.Effect<void, E1, Scope.Scope>,
  after: Effect.Effect<void, E2, Disk> = Effect.void,
) =>
  Effect.gen(function* () {
    const gate = yield* compactionGate;
    yield* Effect.gen(function* () {
      yield* Init.init(directory);
      yield* Effect.scoped(Effect.flatMap(queueHeld(gate), body));
      yield* after;
    }).pipe(withDisk(gate.disk));
  });

describe("the bounded command queue", () => {
  it.effect("refuses a queue bound that is not a positive integer", () =>
    Effect.gen(function* () {
      yield* Init.init(directory);
      for (const queuedCommandsMax of [0, -1, 1.5, Number.NaN]) {
        const refused = yield* Effect.flip(
          Effect.scoped(Engine.open(directory, { timers: false, queuedCommandsMax })),
        );
        expect(refused._tag).toBe("InvalidArgument");
        expect(refused.message).toContain("queuedCommandsMax");
      }
    }).pipe(withDisk(FaultDisk.make())),
  );

  it.effect("one command past the limit is Overloaded at once; room() waits for the drain", () =>
    Effect.gen(function* () {
      yield* Init.init(directory);
      yield* Effect.scoped(
        Effect.gen(function* () {
          const engine = yield* Engine.open(directory, { timers: false, queuedCommandsMax: 3 });
          const { promises } = engine;
          // One turn: nothing drains in between.
          const accepted = [1, 2, 3].map((args) => promises.insert(job(args)));
          const overloaded = promises.insert(job(4)).then(
            () => undefined,
            (error: unknown) => error,
          );
          let roomed = false;
          const room = promises.room().then(() => {
            roomed = true;
          });
          expect(roomed).toBe(false);
          const refusal = yield* Effect.promise(() => overloaded);
          expect(refusal).toBeInstanceOf(Engine.Overloaded);
          expect(String(refusal)).toContain("queuedCommandsMax 3");
          yield* Effect.promise(() => room);
          const inserted = yield* Effect.promise(() => Promise.all(accepted));
          expect(inserted.map((held) => held.args)).toEqual([1, 2, 3]);
          // With room again, the Effect face's room() answers at once.
          yield* engine.room();
          expect((yield* engine.jobs()).map((held) => held.args)).toEqual([1, 2, 3]);
        }),
      );
    }).pipe(withDisk(FaultDisk.make())),
  );

  it.effect("the bound holds while a compaction holds the queue", () =>
    whileQueueHeld(
      ({ engine, release }) =>
        Effect.gen(function* () {
          // The promise face queues synchronously: both wait behind the compaction.
          const queued = [engine.promises.insert(job(1)), engine.promises.insert(job(2))];
          const refused = yield* Effect.flip(engine.insert(job(3)));
          expect(refused._tag).toBe("Overloaded");
          const room = yield* Effect.fork(engine.room());
          yield* Effect.yieldNow();
          expect(room.unsafePoll()).toBeNull();
          yield* release;
          yield* Fiber.join(room);
          const inserted = yield* Effect.promise(() => Promise.all(queued));
          expect(inserted.map((held) => held.args)).toEqual([1, 2]);
        }),
      // The refused command appended nothing.
      Effect.gen(function* () {
        const reopened = yield* Effect.scoped(
          Effect.flatMap(Engine.open(directory, { timers: false }), (engine) => engine.jobs()),
        );
        expect(reopened.map((held) => held.args)).toEqual([1, 2]);
      }),
    ),
  );
  it.effect("a held claim given up by its signal makes room at once", () =>
    whileQueueHeld(({ engine, release }) =>
      Effect.gen(function* () {
        const controller = new AbortController();
        const claim = engine.promises.nextJobs([{ queue: "q", limit: 1 }], {
          signal: controller.signal,
        });
        const queued = engine.promises.insert(job(1));
        const room = yield* Effect.fork(engine.room());
        yield* Effect.yieldNow();
        expect(room.unsafePoll()).toBeNull();
        // The aborted claim leaves the held queue: room() answers while the compaction still holds it.
        controller.abort();
        expect(yield* Effect.promise(() => claim)).toEqual([]);
        yield* Fiber.join(room);
        yield* release;
        expect((yield* Effect.promise(() => queued)).args).toBe(1);
      }),
    ),
  );
  it.effect("a claim given up before it was issued is answered at once and takes no place", () =>
    Effect.gen(function* () {
      yield* Init.init(directory);
      yield* Effect.scoped(
        Effect.gen(function* () {
          const engine = yield* Engine.open(directory, { timers: false, queuedCommandsMax: 1 });
          const controller = new AbortController();
          controller.abort();
          // One turn: the insert finds the queue's one place free.
          const claim = engine.promises.nextJobs([{ queue: "q", limit: 1 }], {
            signal: controller.signal,
          });
          const insert = engine.promises.insert(job(1));
          expect(yield* Effect.promise(() => claim)).toEqual([]);
          expect((yield* Effect.promise(() => insert)).args).toBe(1);
        }),
      );
    }).pipe(withDisk(FaultDisk.make())),
  );

  it.effect("a claim held, then parked, listens once and leaves no listener once answered", () =>
    whileQueueHeld(({ engine, release }) =>
      Effect.gen(function* () {
        const controller = new AbortController();
        // Held behind the compaction: the queue listens to its signal at once...
        const claim = engine.promises.nextJobs([{ queue: "q", limit: 1 }], {
          signal: controller.signal,
        });
        expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
        yield* release;
        // ...and, decided after it, parks: it was listening already.
        const inserted = yield* engine.insert(job(1));
        const started = yield* Effect.promise(() => claim);
        expect(started.map((found) => found.jobId)).toEqual([inserted.jobId]);
        expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
      }),
    ),
  );
});
