/**
 * Waiting claims and timed transitions, without polling: a waiting claim parks on an empty queue
 * and starts the job of the insert that fills it in the same batch; lanes take turns; an aborted
 * or interrupted claim appends nothing; closing refuses what is parked. Under TestClock the
 * engine's one timer makes scheduled jobs and retries available and delivers schedule
 * occurrences at their exact due times, and nothing at all moves with the timers off.
 */
import { getEventListeners } from "node:events";
import { describe, expect, it } from "@effect/vitest";
import { Chunk, Effect, Fiber, TestClock } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import { holdingSyncs } from "../support/heldSyncs.js";
import { dataDirectory, nodeDisk, scheduleDefinition } from "../support/store.js";

const job = (queue: string, args: string | null = null) => ({ queue, worker: "W", args });

const openEngine = (options: Engine.EngineOptions = {}) =>
  Effect.gen(function* () {
    const dir = yield* dataDirectory;
    yield* Init.init(dir);
    return yield* Engine.open(dir, options);
  });

const lastSequence = (engine: Engine.EngineService) =>
  Effect.map(engine.log.stats(), (stats) => stats.lastSequence);

/** Lets every fiber run until each waits on the clock or on a durable write. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)));

/** One turn of the event loop: the writer's I/O goes on. */
const tick = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1)));

/**
 * Waits (real time, at most 5 s) until the job is `state`: a tick's durable write takes as long
 * as the disk does, and a fixed pause was too short for it on a loaded machine.
 */
const untilState = (engine: Engine.EngineService, jobId: number, state: string) =>
  Effect.gen(function* () {
    for (let tries = 0; tries < 250; tries++) {
      if ((yield* engine.job(jobId))?.state === state) return;
      yield* settle;
    }
    return yield* Effect.dieMessage(`job ${jobId} never became ${state}`);
  });

/** Joins `fiber`, failing the test after 5 s of real time (TestClock never fires a timeout). */
const join = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.raceFirst(
    Fiber.join(fiber),
    Effect.flatMap(
      Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5_000))),
      () => Effect.dieMessage("the waiting claim was never answered"),
    ),
  );

describe("waiting claims", () => {
  it.scoped("park on an empty queue and start the next insert's job in the same batch", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const waiting = yield* Effect.fork(engine.nextJobs([{ queue: "q", limit: 2 }]));
      yield* settle;
      expect(yield* lastSequence(engine)).toBe(0);
      // A job of another queue leaves it parked.
      yield* engine.insert(job("other"));
      yield* settle;
      expect(waiting.unsafePoll()).toBeNull();
      const inserted = yield* engine.insert(job("q"));
      const started = yield* join(waiting);
      expect(started.map((found) => [found.jobId, found.state])).toEqual([
        [inserted.jobId, "executing"],
      ]);
      // Insert and start are consecutive records: the claim was decided in the insert's drain.
      const log = yield* engine.log.readFrom(1, 10);
      expect(log.map((entry) => entry.event._tag)).toEqual([
        "JobInserted",
        "JobInserted",
        "JobStarted",
      ]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("take turns between lanes and honour each lane's limit and the total", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      yield* engine.insertMany([job("a"), job("a"), job("a"), job("b"), job("b")]);
      const lanes = [
        { queue: "a", limit: 2 },
        { queue: "b", limit: 1 },
      ];
      const first = yield* engine.nextJobs(lanes, { limit: 10 });
      expect(first.map((found) => found.queue)).toEqual(["a", "a", "b"]);
      yield* engine.insertMany([job("a"), job("b")]);
      // The first claim started from lane a: the next one starts from lane b.
      const second = yield* engine.nextJobs(lanes, { limit: 1 });
      expect(second.map((found) => found.queue)).toEqual(["b"]);
      // Without a total, the lanes' limits summed: two of "a" and one of "b", of the five waiting.
      yield* engine.insertMany([job("a"), job("a")]);
      const third = yield* engine.nextJobs(lanes);
      expect(third.map((found) => found.queue).sort()).toEqual(["a", "a", "b"]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("start from the next lane each time, so a busy queue starves no other", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine({ timers: false });
      yield* engine.insertMany([job("a"), job("a"), job("a"), job("b"), job("b")]);
      const lanes = [
        { queue: "a", limit: 1 },
        { queue: "b", limit: 1 },
      ];
      // One slot, as a worker with one free slot asks: each claim is a new request.
      const started: Array<string> = [];
      for (let claim = 0; claim < 4; claim++) {
        const [found] = yield* engine.nextJobs(lanes, { limit: 1 });
        started.push(found?.queue ?? "none");
      }
      expect(started).toEqual(["a", "b", "a", "b"]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("given up by a signal or an interruption, append nothing and stay unanswered", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const controller = new AbortController();
      const aborted = engine.promises.nextJobs([{ queue: "q", limit: 1 }], {
        signal: controller.signal,
      });
      const interrupted = yield* Effect.fork(engine.nextJobs([{ queue: "q", limit: 1 }]));
      yield* settle;
      controller.abort();
      expect(yield* Effect.promise(() => aborted)).toEqual([]);
      yield* Fiber.interrupt(interrupted);
      const inserted = yield* engine.insert(job("q"));
      yield* settle;
      // Neither claim took the job: it is still available, and only the insert was appended.
      expect((yield* engine.job(inserted.jobId))?.state).toBe("available");
      expect(yield* lastSequence(engine)).toBe(1);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("listen to their signal only once parked: one answered by its drain never does", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const controller = new AbortController();
      let added = 0;
      const add = controller.signal.addEventListener.bind(controller.signal);
      controller.signal.addEventListener = (...args: Parameters<typeof add>) => {
        added += 1;
        add(...args);
      };
      yield* engine.insert(job("q"));
      const started = yield* engine.nextJobs([{ queue: "q", limit: 1 }], {
        signal: controller.signal,
      });
      expect(started).toHaveLength(1);
      expect(added).toBe(0);
      // Parked: now it listens, and an abort answers it with no job.
      const parked = engine.promises.nextJobs([{ queue: "q", limit: 1 }], {
        signal: controller.signal,
      });
      yield* settle;
      expect(added).toBe(1);
      controller.abort();
      expect(yield* Effect.promise(() => parked)).toEqual([]);
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("given up in the turn they were issued in, start nothing though jobs wait", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const inserted = yield* engine.insert(job("q"));
      const controller = new AbortController();
      const aborted = engine.promises.nextJobs([{ queue: "q", limit: 1 }], {
        signal: controller.signal,
      });
      controller.abort();
      expect(yield* Effect.promise(() => aborted)).toEqual([]);
      expect((yield* engine.job(inserted.jobId))?.state).toBe("available");
      expect(yield* lastSequence(engine)).toBe(1);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("given up after their drain started jobs, answer those jobs, not none", () => {
    const disk = holdingSyncs();
    return Effect.gen(function* () {
      const engine = yield* openEngine({ timers: false });
      const controller = new AbortController();
      // One drain: the claim parks (and listens to its signal), then the insert wakes it.
      const claim = engine.promises.nextJobs([{ queue: "q", limit: 1 }], {
        signal: controller.signal,
      });
      disk.hold();
      const insert = engine.promises.insert(job("q"));
      while (disk.state.waiting === 0) yield* tick;
      // The batch that starts the job is written, not durable: the abort comes too late.
      controller.abort();
      disk.release();
      const inserted = yield* Effect.promise(() => insert);
      const started = yield* Effect.promise(() => claim);
      expect(started.map((found) => [found.jobId, found.state])).toEqual([
        [inserted.jobId, "executing"],
      ]);
    }).pipe(Effect.provide(disk.layer));
  });

  it.scoped("wake when their paused queue resumes, or when its concurrency frees a slot", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine({ timers: false });
      yield* engine.insertMany([job("q"), job("q")]);
      yield* engine.pauseQueue("q");
      const parked = yield* Effect.fork(engine.nextJobs([{ queue: "q", limit: 1 }]));
      yield* settle;
      // Nothing is inserted or made due: the resume alone lets the parked claim start a job.
      yield* engine.resumeQueue("q");
      const started = yield* join(parked);
      expect(started).toHaveLength(1);
      yield* engine.setQueueLimits("q", { concurrency: 1 });
      const second = yield* Effect.fork(engine.nextJobs([{ queue: "q", limit: 1 }]));
      yield* settle;
      // One executing of a concurrency of 1: the completion frees the slot.
      yield* engine.complete(started[0]?.jobId ?? 0);
      expect(yield* join(second)).toHaveLength(1);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("take their listener off a signal once answered, however many share it", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const controller = new AbortController();
      for (let index = 0; index < 50; index++) {
        yield* engine.insert(job("q"));
        const started = yield* engine.nextJobs([{ queue: "q", limit: 1 }], {
          signal: controller.signal,
        });
        expect(started).toHaveLength(1);
      }
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped(
    "are refused at once for a lane's bad queue name or a total below 1, never parked",
    () =>
      Effect.gen(function* () {
        const engine = yield* openEngine({ timers: false });
        const claims = [
          engine.nextJobs([{ queue: "", limit: 1 }]),
          engine.nextJobs([{ queue: "q", limit: 1 }], { limit: 0 }),
        ];
        for (const claim of claims) {
          // Parked, it would never be answered: `join` fails the test after 5 s.
          const refused = yield* Effect.flip(join(yield* Effect.fork(claim)));
          expect(refused._tag === "Rejected" && refused.rejection._tag).toBe("InvalidField");
        }
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("are refused when the engine closes, and a lane-less claim at once", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine();
      const refused = yield* Effect.flip(engine.nextJobs([{ queue: "q", limit: 0 }]));
      expect(refused._tag === "Rejected" && refused.rejection._tag).toBe("InvalidField");
      const waiting = yield* Effect.fork(Effect.flip(engine.nextJobs([{ queue: "q", limit: 1 }])));
      yield* settle;
      yield* engine.close();
      expect((yield* join(waiting))._tag).toBe("StoreClosed");
    }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("timers", () => {
  it.scoped("make a scheduled job available at its time, for a parked claim", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(10_000);
      const engine = yield* openEngine();
      const later = yield* engine.insert({ ...job("q"), scheduledAt: 15_000 });
      expect(later.state).toBe("scheduled");
      const waiting = yield* Effect.fork(engine.nextJobs([{ queue: "q", limit: 1 }]));
      yield* settle;
      yield* TestClock.adjust(4_999);
      yield* settle;
      expect(waiting.unsafePoll()).toBeNull();
      yield* TestClock.adjust(1);
      const [started] = yield* join(waiting);
      expect([started?.jobId, started?.attemptedAt]).toEqual([later.jobId, 15_000]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("wake again at the next due time right after a tick that moved something", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(10_000);
      const engine = yield* openEngine();
      const first = yield* engine.insert({ ...job("q"), scheduledAt: 15_000 });
      const second = yield* engine.insert({ ...job("q"), scheduledAt: 15_100 });
      yield* settle;
      yield* TestClock.adjust(5_000);
      yield* untilState(engine, first.jobId, "available");
      // The timer arms its next sleep once the tick's drain is done.
      yield* settle;
      expect((yield* engine.job(second.jobId))?.state).toBe("scheduled");
      // The tick moved a job: the timer sleeps to the next due time, not a stuck-tick pause.
      yield* TestClock.adjust(100);
      yield* untilState(engine, second.jobId, "available");
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("bring a failed job back after its backoff, and deliver schedule occurrences", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0);
      const engine = yield* openEngine();
      yield* engine.insert({ ...job("q"), maxAttempts: 2 });
      const [claimed] = yield* engine.claim("q");
      const failed = yield* engine.fail(claimed?.jobId ?? 0, "boom");
      expect(failed.state).toBe("retryable");
      yield* engine.registerSchedule("every-minute", scheduleDefinition);
      const retry = yield* Effect.fork(engine.nextJobs([{ queue: "q", limit: 1 }]));
      yield* settle;
      yield* TestClock.adjust(failed.scheduledAt);
      const [again] = yield* join(retry);
      expect([again?.jobId, again?.attempt]).toEqual([failed.jobId, 2]);
      // The schedule's first occurrence is due a minute after it was registered.
      yield* TestClock.setTime(60_000);
      yield* settle;
      const reports = yield* engine.jobs({ queue: "reports" });
      expect(reports.map((found) => found.state)).toEqual(["available"]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("start a claim held back only by a rate limit when its window passes", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(10_000);
      const engine = yield* openEngine();
      yield* engine.setQueueLimits("q", { rateLimit: { count: 2, perMs: 1_000 } });
      yield* engine.insertMany([job("q"), job("q"), job("q")]);
      yield* engine.nextJobs([{ queue: "q", limit: 1 }]);
      yield* TestClock.adjust(300);
      const [second] = yield* engine.nextJobs([{ queue: "q", limit: 1 }]);
      yield* engine.complete(second?.jobId ?? 0);
      // Both starts of the window are used: the claim parks, and nothing commits after it.
      const third = yield* Effect.fork(engine.nextJobs([{ queue: "q", limit: 1 }]));
      yield* settle;
      yield* TestClock.adjust(699);
      yield* settle;
      expect(third.unsafePoll()).toBeNull();
      // The start at 10,000 leaves the window (t - 1,000, t] at 11,000: no command, only the timer.
      yield* TestClock.adjust(1);
      const started = yield* join(third);
      expect(started.map((found) => found.attemptedAt)).toEqual([11_000]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("leave the timer asleep for a claim parked on a full window with no job to start", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0);
      const engine = yield* openEngine();
      yield* engine.setQueueLimits("q", { rateLimit: { count: 1, perMs: 500 } });
      const [only] = yield* engine.insertMany([job("q")]);
      yield* engine.nextJobs([{ queue: "q", limit: 1 }]);
      yield* engine.complete(only?.jobId ?? 0);
      // The queue is empty: no window's end can start anything, so it is no wake time.
      const parked = yield* Effect.fork(engine.nextJobs([{ queue: "q", limit: 1 }]));
      yield* settle;
      yield* TestClock.adjust(2_000);
      yield* settle;
      const wakes = Chunk.toReadonlyArray(yield* TestClock.sleeps());
      // Only the timer's look at the wall clock is left; a timer woken at the window's end
      // would find nothing to start and try again every stuckRetryMs (1 s).
      expect(wakes.filter((at) => at < 60_000)).toEqual([]);
      expect(parked.unsafePoll()).toBeNull();
      yield* Fiber.interrupt(parked);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("leave a rate-held claim to the caller's tick when they are off", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0);
      const engine = yield* openEngine({ timers: false });
      yield* engine.setQueueLimits("q", { rateLimit: { count: 1, perMs: 500 } });
      yield* engine.insertMany([job("q"), job("q")]);
      yield* engine.nextJobs([{ queue: "q", limit: 1 }]);
      const second = yield* Effect.fork(engine.nextJobs([{ queue: "q", limit: 1 }]));
      yield* TestClock.adjust(10_000);
      yield* settle;
      expect(second.unsafePoll()).toBeNull();
      // A tick that finds nothing due is still a drain: it decides the parked claim again.
      const ticked = yield* engine.tick();
      expect(ticked.madeAvailable).toBe(0);
      expect((yield* join(second)).map((found) => found.attemptedAt)).toEqual([10_000]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("move nothing when they are off", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(0);
      const engine = yield* openEngine({ timers: false });
      yield* engine.insert({ ...job("q"), scheduledAt: 1_000 });
      yield* engine.registerSchedule("every-minute", scheduleDefinition);
      const before = yield* lastSequence(engine);
      yield* TestClock.adjust(120_000);
      yield* settle;
      expect(yield* lastSequence(engine)).toBe(before);
      const ticked = yield* engine.tick();
      expect([ticked.madeAvailable, ticked.delivered]).toEqual([1, 1]);
    }).pipe(Effect.provide(nodeDisk)),
  );
});
