// Proves the engine's catch-up when several engines share one log: three engines in one process
// race inserts, claims and completions over a shared in-memory log with the PostgreSQL log's
// conflict rule, under random write delays (fast-check): no job is started twice, every
// acknowledged insert is in the log, and each engine's state equals the log's fold. A command that
// loses every race is refused with ContentionExhausted after its retries, nothing appended; a claim
// parked in one engine wakes when another engine inserts (the log's notice of other writers).
import { describe, expect, it } from "@effect/vitest";
import { Event, State } from "@tay/core";
import { Cause, Effect } from "effect";
import * as fc from "fast-check";
import * as Engine from "../../src/engine/Engine.js";
import { insertedEvent } from "../support/job.js";
import * as SharedLog from "../support/sharedLog.js";

type SharedEngine = Engine.EngineService<SharedLog.SharedKind>;

const openEngine = (
  log: SharedLog.Shared,
  options: SharedLog.WriterOptions = {},
  retries = 64,
  backoffMs?: number,
) =>
  Effect.flatMap(SharedLog.open(log, options), (recovered) =>
    Engine.fromLog(recovered, {
      timers: false,
      rescueOnOpen: false,
      conflictRetriesMax: retries,
      ...(backoffMs === undefined ? {} : { conflictBackoffMs: backoffMs }),
    }),
  );

/**
 * Another writer that inserts a job right before each of this engine's
 * writes while `losses` lasts, and notes when each write was tried.
 */
const losingRaces = (log: SharedLog.Shared) => {
  const race = {
    losses: 0,
    triedAt: [] as Array<number>,
    interloper: () => {
      race.triedAt.push(performance.now());
      if (race.losses === 0) return;
      race.losses -= 1;
      // Every record of these tests is an insert: job ID and sequence go together.
      const sequence = log.entries.length + 1;
      log.entries.push({ sequence, event: insertedEvent(sequence) });
    },
    /** Milliseconds between one try and the next. */
    gaps: () => race.triedAt.slice(1).map((at, index) => at - (race.triedAt[index] ?? at)),
  };
  return race;
};

type Race = ReturnType<typeof losingRaces>;

/**
 * Makes `engine` one of two even writers: 64 records of its own and 64 of
 * another's folded (an engine in no even race never steps aside). Forgets
 * the tries it made.
 */
const evenWriter = (engine: SharedEngine, log: SharedLog.Shared, race: Race) =>
  Effect.gen(function* () {
    yield* SharedLog.evenRace(engine, log);
    race.triedAt.length = 0;
  });

/**
 * A shared log, another writer that gets in first while its losses last,
 * and an engine on the log that steps aside 20 ms.
 */
const racingEngine = (options: SharedLog.WriterOptions = {}) =>
  Effect.gen(function* () {
    const log = SharedLog.shared();
    const race = losingRaces(log);
    const engine = yield* openEngine(log, { interloper: race.interloper, ...options }, 64, 20);
    return { log, race, engine };
  });

/** One insert that loses `losses` races in a row, each caught up at once, never stepping aside. */
const losesWithoutWaiting = (engine: SharedEngine, race: Race, losses: number) =>
  Effect.gen(function* () {
    race.triedAt.length = 0;
    race.losses = losses;
    yield* engine.insert({ queue: "q", worker: "W", args: "lost" });
    const gaps = race.gaps();
    expect(gaps).toHaveLength(losses);
    expect(Math.max(...gaps)).toBeLessThan(19);
    expect(engine.contention().stepsAside).toBe(0);
  });

/** A delay of 0 to 3 macrotask hops, drawn from `draws` in turn. */
const delays = (draws: ReadonlyArray<number>) => {
  let next = 0;
  return async () => {
    const hops = draws[next++ % draws.length] ?? 0;
    for (let hop = 0; hop < hops; hop++) await new Promise((resolve) => setImmediate(resolve));
  };
};

/** One engine's share of the race: insert, claim, complete, `rounds` times. */
const racer = async (engine: SharedEngine, rounds: number) => {
  const inserted: Array<number> = [];
  const started: Array<number> = [];
  for (let round = 0; round < rounds; round++) {
    const jobs = await engine.promises.insertMany([
      { queue: "q", worker: "W", args: round },
      { queue: "q", worker: "W", args: -round },
    ]);
    for (const job of jobs) inserted.push(job.jobId);
    const claimed = await engine.promises.claim("q", 2);
    for (const job of claimed) started.push(job.jobId);
    const first = claimed[0];
    if (first !== undefined) await engine.promises.complete(first.jobId, undefined, { attempt: 1 });
  }
  return { inserted, started };
};

/** An interloper that, once, starts `jobId` in the shared log as another engine would. */
const startsOnce = (log: SharedLog.Shared, jobId: number) => {
  let interloped = false;
  return () => {
    if (interloped) return;
    interloped = true;
    const event = Event.jobStarted({ jobId, at: 1, attempt: 1 });
    log.entries.push({ sequence: log.entries.length + 1, event });
  };
};

const nextTurn = Effect.promise(() => new Promise((resolve) => setImmediate(resolve)));

describe("several engines on one shared log", () => {
  it.effect(
    "racing engines never start a job twice and keep every acknowledged insert",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 8 }), {
              minLength: 3,
              maxLength: 3,
            }),
            async (draws) => {
              const log = SharedLog.shared();
              const program = Effect.scoped(
                Effect.gen(function* () {
                  const engines: Array<SharedEngine> = [];
                  // The first engine steps aside after repeated conflicts (conflictBackoffMs);
                  // the guard, not the timing, keeps every job started once.
                  for (const [index, draw] of draws.entries()) {
                    const backoffMs = index === 0 ? 20 : 0;
                    engines.push(yield* openEngine(log, { delay: delays(draw) }, 64, backoffMs));
                  }
                  const runs = yield* Effect.promise(() =>
                    Promise.all(engines.map((engine) => racer(engine, 6))),
                  );
                  // Every engine catches up with the others before its state is compared.
                  for (const engine of engines)
                    yield* engine.insert({ queue: "end", worker: "W", args: null });
                  return {
                    runs,
                    engines,
                    contention: engines.map((engine) => engine.contention()),
                  };
                }),
              );
              const { runs, contention } = await Effect.runPromise(program);
              const started = runs.flatMap((run) => run.started);
              expect(new Set(started).size).toBe(started.length);
              const state = SharedLog.folded(log);
              for (const jobId of runs.flatMap((run) => run.inserted)) {
                expect(state.jobs.has(jobId)).toBe(true);
              }
              expect(state.jobs.size).toBe(runs.length * 12 + 3);
              for (const jobId of started) {
                expect(["executing", "completed"]).toContain(state.jobs.get(jobId)?.state);
              }
              expect(contention.every((stats) => stats.exhausted === 0)).toBe(true);
            },
          ),
          { numRuns: 15 },
        ),
      ),
    60_000,
  );

  it.effect("each engine's state is the fold of the shared log once it caught up", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const first = yield* openEngine(log);
        const second = yield* openEngine(log);
        yield* Effect.promise(() => Promise.all([racer(first, 5), racer(second, 5)]));
        // A write after the other's makes each engine read what it missed.
        yield* first.insert({ queue: "end", worker: "W", args: 1 });
        yield* second.insert({ queue: "end", worker: "W", args: 2 });
        yield* first.insert({ queue: "end", worker: "W", args: 3 });
        const folded = SharedLog.folded(log);
        expect(State.equals(first.promises.state(), folded)).toBe(true);
        expect(second.contention().conflicts + first.contention().conflicts).toBeGreaterThan(0);
      }),
    ),
  );

  it.effect(
    "a command that loses every race is ContentionExhausted, and nothing of it is appended",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const log = SharedLog.shared();
          const other = yield* openEngine(log);
          yield* other.insert({ queue: "q", worker: "W", args: "first" });
          // Another writer appends a job right before every write of this engine.
          let lastJobId = 1;
          const interloper = () => {
            lastJobId += 1;
            const event = insertedEvent(lastJobId);
            log.entries.push({ sequence: log.entries.length + 1, event });
          };
          const loser = yield* openEngine(log, { interloper }, 2);
          const refused = yield* Effect.flip(
            loser.insert({ queue: "q", worker: "W", args: "lost" }),
          );
          expect(refused._tag).toBe("ContentionExhausted");
          expect(refused.message).toBe(
            `ContentionExhausted memory://shared: other writers appended before each of 3 attempts (log at sequence ${log.entries.length}); nothing of this command was appended`,
          );
          expect(loser.contention()).toMatchObject({ conflicts: 3, retried: 2, exhausted: 1 });
          expect(SharedLog.folded(log).jobs.size).toBe(lastJobId);
        }),
      ),
  );

  it.effect(
    "a command that appended nothing is decided again when the append it waited on conflicts",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const log = SharedLog.shared();
          // One other writer gets in before this engine's first write, and only then.
          const interloper = SharedLog.insertsOnce(log);
          const delay = () => new Promise<void>((resolve) => setImmediate(resolve));
          const engine = yield* openEngine(log, { interloper, delay });
          const [inserted, claimed] = yield* Effect.promise(async () => {
            const insert = engine.promises.insert({ queue: "q", worker: "W", args: "mine" });
            // The insert's drain runs first; this claim finds nothing and waits on its append.
            await Promise.resolve();
            const claim = engine.promises.claim("none", 1);
            return Promise.all([insert, claim]);
          });
          expect(claimed).toEqual([]);
          expect(inserted.jobId).toBe(2);
          expect(engine.contention().retried).toBe(2);
        }),
      ),
  );

  it.effect(
    "a claim that finds nothing once caught up is answered, not retried until exhausted",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const log = SharedLog.shared();
          const inserting = yield* openEngine(log);
          const job = yield* inserting.insert({ queue: "q", worker: "W", args: "only" });
          // Another engine starts that job right before this engine's first write.
          const engine = yield* openEngine(log, { interloper: startsOnce(log, job.jobId) });
          const claimed = yield* engine.claim("q", 1);
          expect(claimed).toEqual([]);
          expect(engine.contention()).toMatchObject({ conflicts: 1, retried: 1, exhausted: 0 });
        }),
      ),
  );

  it.effect("a claim parked in one engine wakes when another engine inserts", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const waiting = yield* openEngine(log);
        const inserting = yield* openEngine(log);
        const claim = waiting.promises.nextJobs([{ queue: "q", limit: 1 }]);
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)));
        const job = yield* inserting.insert({ queue: "q", worker: "W", args: "from the other" });
        const [started] = yield* Effect.promise(() => claim);
        expect(started?.jobId).toBe(job.jobId);
        expect(SharedLog.folded(log).jobs.get(job.jobId)?.state).toBe("executing");
      }),
    ),
  );

  it.effect(
    "a waiting claim is told it is decided before its answer, and not while it is parked",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const log = SharedLog.shared();
          const engine = yield* openEngine(log);
          const seen: Array<string> = [];
          const claim = engine.promises
            .nextJobs([{ queue: "q", limit: 2 }], { onDecided: () => seen.push("decided") })
            .then((jobs) => seen.push(`answered ${jobs.length}`));
          yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)));
          expect(seen).toEqual([]);
          yield* engine.insert({ queue: "q", worker: "W", args: null });
          yield* Effect.promise(() => claim);
          expect(seen).toEqual(["decided", "answered 1"]);
          // Given up while parked: answered with nothing, never told.
          const controller = new AbortController();
          const parked = engine.promises.nextJobs([{ queue: "q", limit: 1 }], {
            signal: controller.signal,
            onDecided: () => seen.push("decided again"),
          });
          yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)));
          controller.abort();
          expect(yield* Effect.promise(() => parked)).toEqual([]);
          expect(seen).toEqual(["decided", "answered 1"]);
        }),
      ),
  );

  it.effect(
    "a claim told it is decided waits again when its append conflicts and the job is gone",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const log = SharedLog.shared();
          const inserting = yield* openEngine(log);
          const job = yield* inserting.insert({ queue: "q", worker: "W", args: "only" });
          const engine = yield* openEngine(log, { interloper: startsOnce(log, job.jobId) });
          let decided = 0;
          const controller = new AbortController();
          const claim = engine.promises.nextJobs([{ queue: "q", limit: 1 }], {
            signal: controller.signal,
            onDecided: () => {
              decided += 1;
            },
          });
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)));
          // Decided once, refused by the log, decided again against the catch-up: no job, parked.
          expect(decided).toBe(1);
          controller.abort();
          expect(yield* Effect.promise(() => claim)).toEqual([]);
        }),
      ),
  );

  it.effect("without notices of other writers, the parked claim waits (the test's control)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const waiting = yield* openEngine(log, { notified: false });
        const inserting = yield* openEngine(log);
        let answered = false;
        const controller = new AbortController();
        const claim = waiting.promises
          .nextJobs([{ queue: "q", limit: 1 }], { signal: controller.signal })
          .then((jobs) => {
            answered = true;
            return jobs;
          });
        yield* inserting.insert({ queue: "q", worker: "W", args: null });
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)));
        expect(answered).toBe(false);
        controller.abort();
        expect(yield* Effect.promise(() => claim)).toEqual([]);
      }),
    ),
  );

  // The catch-up moves onto another writer's generation (its compaction):
  // the base's length must be told, or the base's restated jobs could not be
  // told from the events after it. A log that moves without telling it ends
  // the engine's command with a defect that says so; told, the same history
  // reloads and the command goes on.
  const afterAMove = (moved: NonNullable<SharedLog.WriterOptions["movesOnRefresh"]>) =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const moving = yield* openEngine(log, { notified: false, movesOnRefresh: moved });
        const other = yield* openEngine(log);
        yield* other.insert({ queue: "q", worker: "W", args: 1 });
        // `moving` still expects the log empty: its insert conflicts and catches up.
        const inserted = yield* Effect.exit(
          Effect.promise(() => moving.promises.insert({ queue: "q", worker: "W", args: 2 })),
        );
        const { reloads, recordsFolded } = moving.contention();
        return { inserted, reloads, recordsFolded };
      }),
    );

  it.effect("a move onto a generation with its base's length told reloads and goes on", () =>
    Effect.gen(function* () {
      const { inserted, reloads, recordsFolded } = yield* afterAMove({
        epoch: 2,
        firstSequence: 1,
        baseRecordCount: 0,
      });
      expect(inserted._tag).toBe("Success");
      expect(reloads).toBe(1);
      // The other writer's one record, folded from the generation's first.
      expect(recordsFolded).toBe(1);
    }),
  );

  it.effect("a reload tells watchers every record after the new base, from the first", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const moved = { epoch: 2, firstSequence: 1, baseRecordCount: 0 };
        const moving = yield* openEngine(log, { notified: false, movesOnRefresh: moved });
        const told: Array<number> = [];
        moving.watch((records) => {
          for (const record of records) told.push(record.sequence);
        });
        const other = yield* openEngine(log);
        yield* other.insertMany([
          { queue: "q", worker: "W", args: 1 },
          { queue: "q", worker: "W", args: 2 },
        ]);
        yield* other.insert({ queue: "q", worker: "W", args: 3 });
        // The conflict reloads the other writer's generation: an empty base, then its records
        // 1 and 2, told as the reload commits them, and 3, this engine's insert.
        yield* Effect.promise(() => moving.promises.insert({ queue: "q", worker: "W", args: 4 }));
        expect(moving.contention().reloads).toBe(1);
        expect(told).toEqual(log.entries.map((entry) => entry.sequence));
      }),
    ),
  );

  it.effect("a move onto a generation whose base's length is untold is a defect that says so", () =>
    Effect.gen(function* () {
      const { inserted, reloads } = yield* afterAMove({ epoch: 2, firstSequence: 1 });
      expect(inserted._tag).toBe("Failure");
      expect(String(inserted._tag === "Failure" ? Cause.squash(inserted.cause) : "")).toContain(
        "moved onto epoch 2 without telling its base's length",
      );
      expect(reloads).toBe(0);
    }),
  );

  it.effect(
    "another writer's record the fold refuses ends the command with the refusal's reason",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const log = SharedLog.shared();
          const engine = yield* openEngine(log, { notified: false });
          // Another writer's illegal record: job 9 was never inserted.
          log.entries.push({
            sequence: 1,
            event: { _tag: "JobStarted", jobId: 9, at: 1, attempt: 1 },
          });
          const inserted = yield* Effect.exit(
            Effect.promise(() => engine.promises.insert({ queue: "q", worker: "W", args: 1 })),
          );
          expect(inserted._tag).toBe("Failure");
          expect(String(inserted._tag === "Failure" ? Cause.squash(inserted.cause) : "")).toContain(
            "another writer's record refused by the fold: UnknownJob",
          );
          expect(log.entries).toHaveLength(1);
        }),
      ),
  );
  it.effect(
    "a waiting claim held behind a catch-up is answered with no job once its signal aborts, before the catch-up ends",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const log = SharedLog.shared();
          const inserting = yield* openEngine(log);
          const job = yield* inserting.insert({ queue: "q", worker: "W", args: "only" });
          const gate = SharedLog.readGate();
          const engine = yield* openEngine(log, {
            interloper: startsOnce(log, job.jobId),
            beforeRead: gate.beforeRead,
          });
          // Refused by its append's conflict: held while the catch-up's read waits at the gate.
          const refused = new AbortController();
          const first = engine.promises.nextJobs([{ queue: "q", limit: 1 }], {
            signal: refused.signal,
          });
          yield* Effect.promise(() => gate.reached);
          // Issued while the catch-up runs: held behind it.
          const issued = new AbortController();
          const second = engine.promises.nextJobs([{ queue: "q", limit: 1 }], {
            signal: issued.signal,
          });
          yield* nextTurn;
          refused.abort();
          issued.abort();
          // Answered with the gate still shut: neither waits for the catch-up to end.
          expect(yield* Effect.promise(() => first)).toEqual([]);
          expect(yield* Effect.promise(() => second)).toEqual([]);
          gate.open();
        }),
      ),
  );

  it.effect("a notice that the log moved while a catch-up runs starts another after it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const gate = SharedLog.readGate();
        const waiting = yield* openEngine(log, { beforeRead: gate.beforeRead });
        const inserting = yield* openEngine(log);
        const claim = waiting.promises.nextJobs([{ queue: "q", limit: 1 }]);
        yield* nextTurn;
        yield* inserting.insert({ queue: "elsewhere", worker: "W", args: null });
        // The first catch-up learned the head (one record) and waits to read it.
        yield* Effect.promise(() => gate.reached);
        const job = yield* inserting.insert({ queue: "q", worker: "W", args: null });
        gate.open();
        const [started] = yield* Effect.promise(() => claim);
        expect(started?.jobId).toBe(job.jobId);
        expect(waiting.contention().catchUps).toBe(2);
      }),
    ),
  );

  it.effect("a compaction no notice interrupted starts no catch-up when it ends", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const engine = yield* openEngine(log);
        yield* engine.insert({ queue: "q", worker: "W", args: null });
        // The shared log does not compact (the compaction dies): the catch-ups it held resume.
        yield* Effect.exit(engine.compact(0));
        expect(engine.contention().catchUps).toBe(0);
      }),
    ),
  );

  it.effect(
    "an engine that keeps losing waits before it catches up, longer each time, and not after an append of its own",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const log = SharedLog.shared();
          const race = losingRaces(log);
          const engine = yield* openEngine(log, { interloper: race.interloper }, 64, 20);
          yield* evenWriter(engine, log, race);
          race.losses = 4;
          const first = yield* engine.insert({ queue: "q", worker: "W", args: "first" });
          expect(first.jobId).toBe(129 + 5);
          const lost = race.gaps();
          expect(lost).toHaveLength(4);
          // The first race lost: caught up at once; then 20, 40 and 80 ms before each try.
          expect(lost[0]).toBeLessThan(19);
          expect(lost[1]).toBeGreaterThanOrEqual(19);
          expect(lost[2]).toBeGreaterThanOrEqual(39);
          expect(lost[3]).toBeGreaterThanOrEqual(79);
          // Its append went through: the next conflict is caught up at once, the one after
          // waits 20 ms again (not the 160 of a sixth loss in a row).
          race.triedAt.length = 0;
          race.losses = 2;
          yield* engine.insert({ queue: "q", worker: "W", args: "second" });
          const again = race.gaps();
          expect(again).toHaveLength(2);
          expect(again[0]).toBeLessThan(19);
          expect(again[1]).toBeGreaterThanOrEqual(19);
          expect(again[1]).toBeLessThan(150);
          // Waits of 20, 40 and 80 ms, then 20: four steps aside (seven conflicts with the one
          // that folded the other writer's 64 records).
          expect(engine.contention()).toMatchObject({
            shared: true,
            conflicts: 7,
            exhausted: 0,
            stepsAside: 4,
            steppedAsideMs: 160,
          });
        }),
      ),
  );

  it.effect("by default an engine in an even race that keeps losing steps aside (20 ms)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const race = losingRaces(log);
        const engine = yield* openEngine(log, { interloper: race.interloper });
        yield* evenWriter(engine, log, race);
        race.losses = 3;
        yield* engine.insert({ queue: "q", worker: "W", args: "first" });
        const gaps = race.gaps();
        expect(gaps).toHaveLength(3);
        expect(gaps[0]).toBeLessThan(19);
        expect(gaps[1]).toBeGreaterThanOrEqual(19);
        expect(gaps[2]).toBeGreaterThanOrEqual(39);
      }),
    ),
  );

  it.effect(
    "an engine whose own records are most of those it saw lately (a dominant writer) never steps aside",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { race, engine } = yield* racingEngine();
          yield* SharedLog.ownInserts(engine, 64);
          yield* losesWithoutWaiting(engine, race, 5);
        }),
      ),
  );

  it.effect(
    "an engine that has seen under 64 records lately is in no race yet: it never steps aside",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { log, race, engine } = yield* racingEngine();
          // Even, but few: 11 records of its own, 10 of the other writer's folded.
          yield* SharedLog.ownInserts(engine, 10);
          SharedLog.othersAppend(log, 10);
          yield* engine.insert({ queue: "few", worker: "W", args: "folds them" });
          yield* losesWithoutWaiting(engine, race, 3);
        }),
      ),
  );

  it.effect(
    "an engine whose own records are few among those it saw lately (a minority writer) never steps aside",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { log, race, engine } = yield* racingEngine();
          yield* evenWriter(engine, log, race);
          // Another writer appends 600 records; this engine's next insert folds them: its own
          // 65 are under an eighth of the 730 it has seen.
          SharedLog.othersAppend(log, 600);
          yield* engine.insert({ queue: "q", worker: "W", args: "caught up" });
          yield* losesWithoutWaiting(engine, race, 5);
          expect(engine.contention().recordsFolded).toBe(64 + 600 + 5);
        }),
      ),
  );

  it.effect(
    "an engine tells the log when it becomes a minority writer and when it stops being one",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const minority: Array<boolean> = [];
          const { log, race, engine } = yield* racingEngine({ minority });
          yield* evenWriter(engine, log, race);
          expect(minority).toEqual([]);
          // 65 of 730: a minority writer.
          SharedLog.othersAppend(log, 600);
          yield* engine.insert({ queue: "q", worker: "W", args: "caught up" });
          expect(minority).toEqual([true]);
          // Told once, not at every record.
          yield* engine.insert({ queue: "q", worker: "W", args: "still few" });
          expect(minority).toEqual([true]);
          // 96 more of its own: 162 of 827, over an eighth again.
          yield* SharedLog.ownInserts(engine, 96);
          expect(minority).toEqual([true, false]);
        }),
      ),
  );

  it.effect("an engine that has appended nothing is no minority writer, whatever it folded", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const minority: Array<boolean> = [];
        const quiet = yield* openEngine(log, { minority }, 64, 20);
        const busy = yield* openEngine(log, {}, 64, 20);
        yield* SharedLog.ownInserts(busy, 100);
        // The notices of the busy engine's appends make the quiet one fold them.
        while (quiet.contention().recordsFolded < 100) yield* nextTurn;
        expect(minority).toEqual([]);
        // Its first insert of its own: 1 of 101, a minority writer from now on.
        yield* quiet.insert({ queue: "q", worker: "W", args: "first" });
        expect(minority).toEqual([true]);
      }),
    ),
  );

  it.effect(
    "what makes a minority writer is what it saw lately: an engine busy long ago and rare since never steps aside",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const minority: Array<boolean> = [];
          const { log, race, engine } = yield* racingEngine({ minority });
          yield* SharedLog.ownInserts(engine, 4000);
          // Then another writer appends 16,000 records, 4,000 at a time, each folded by this
          // engine's next insert: a fifth of all it has seen is its own, an eighth of it lately.
          for (let round = 0; round < 4; round++) {
            SharedLog.othersAppend(log, 4000);
            yield* engine.insert({ queue: "q", worker: "W", args: round });
          }
          yield* losesWithoutWaiting(engine, race, 5);
          // A minority writer, not a dominant one: the log was told so.
          expect(minority.at(-1)).toBe(true);
        }),
      ),
    30_000,
  );

  it.effect("batches refused together lost one race: the next loss waits 20 ms, not more", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const race = losingRaces(log);
        // The first write waits a while, so three inserts' batches queue into it.
        let writes = 0;
        const delay = () =>
          writes++ === 0
            ? new Promise<void>((resolve) => setTimeout(resolve, 20))
            : Promise.resolve();
        const engine = yield* openEngine(log, { interloper: race.interloper, delay }, 64, 20);
        yield* evenWriter(engine, log, race);
        writes = 0;
        race.losses = 2;
        const inserted = yield* Effect.promise(async () => {
          const all: Array<Promise<unknown>> = [];
          for (const args of ["a", "b", "c"]) {
            all.push(engine.promises.insert({ queue: "q", worker: "W", args }));
            await new Promise((resolve) => setImmediate(resolve));
          }
          return Promise.all(all);
        });
        expect(inserted).toHaveLength(3);
        // Three batches refused by one write, then one write of all three refused again.
        expect(engine.contention().conflicts).toBe(1 + 4);
        const gaps = race.gaps();
        expect(gaps).toHaveLength(2);
        // The second loss in a row waits 20 ms; counted per batch it would be the fourth: 80 ms.
        expect(gaps[1]).toBeGreaterThanOrEqual(19);
        expect(gaps[1]).toBeLessThan(60);
      }),
    ),
  );

  it.effect("a conflict whose head the log holds for this engine is caught up at once", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const race = losingRaces(log);
        // From the third conflict in a row on, the log says it holds the head (a turn).
        const held = () => race.triedAt.length >= 3;
        const engine = yield* openEngine(log, { interloper: race.interloper, held }, 64, 20);
        yield* evenWriter(engine, log, race);
        race.losses = 4;
        yield* engine.insert({ queue: "q", worker: "W", args: "first" });
        const gaps = race.gaps();
        expect(gaps).toHaveLength(4);
        // At once, 20 ms (not held), then at once twice where 40 and 80 ms were due.
        expect(gaps[1]).toBeGreaterThanOrEqual(19);
        expect(gaps[2]).toBeLessThan(19);
        expect(gaps[3]).toBeLessThan(19);
      }),
    ),
  );

  it.effect("a conflictBackoffMs that is not 0 to 60,000 whole milliseconds is refused", () =>
    Effect.gen(function* () {
      for (const value of [-1, 1.5, 60_001]) {
        const refused = yield* Effect.flip(
          Effect.scoped(openEngine(SharedLog.shared(), {}, 64, value)),
        );
        expect(refused).toMatchObject({ _tag: "InvalidArgument", argument: "conflictBackoffMs" });
        expect(refused).toMatchObject({ value: String(value) });
      }
    }),
  );

  it.effect("a command issued while a catch-up runs is held for it, not decided and refused", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = SharedLog.shared();
        const gate = SharedLog.readGate();
        // Another writer's insert lands right before this engine's first write.
        const interloper = SharedLog.insertsOnce(log);
        const engine = yield* openEngine(log, { interloper, beforeRead: gate.beforeRead });
        const first = engine.promises.insert({ queue: "q", worker: "W", args: "first" });
        // Refused by the conflict, the first insert waits while the catch-up's read is held.
        yield* Effect.promise(() => gate.reached);
        // Held behind the catch-up: decided on the caught-up state, once. Decided at once,
        // on the stale state, it would conflict and be decided again (a retry more).
        const second = engine.promises.insert({ queue: "q", worker: "W", args: "second" });
        yield* nextTurn;
        gate.open();
        const ids = yield* Effect.promise(() => Promise.all([first, second]));
        expect(ids.map((job) => job.jobId)).toEqual([2, 3]);
        expect(engine.contention()).toMatchObject({ conflicts: 1, retried: 1, catchUps: 1 });
      }),
    ),
  );
});
