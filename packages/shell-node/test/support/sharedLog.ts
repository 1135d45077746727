/**
 * A log that several writers share, in memory, with the PostgreSQL log's
 * rules (docs/postgres.md, "The conflict rule"): each writer queues appends
 * after the last sequence it knows, and a group is written only if the
 * shared log still ends where the group expected; otherwise every queued
 * append of that writer fails with `AppendConflict` and the writer takes
 * the shared last sequence as its own. Writes land after a delay the test
 * chooses, so engines interleave; `refresh` and `watchOthers` follow the
 * other writers as the PostgreSQL log's do (LISTEN/NOTIFY, polling).
 */
import { Event, Generation, type HistoryError } from "@tay/core";
import { Deferred, Effect, Either, Stream } from "effect";
import type * as Engine from "../../src/engine/Engine.js";
import type * as Batch from "../../src/log/Batch.js";
import type * as Log from "../../src/log/Log.js";
import { AppendConflict, CompactionConflict, type LogError } from "../../src/log/LogError.js";
import type { Entry } from "../../src/log/Projection.js";
import * as Ticket from "../../src/log/Ticket.js";
import { insertedEvent } from "./job.js";

/** The shared records, and the writers to tell when one of them wrote. */
export interface Shared {
  readonly entries: Array<Entry>;
  readonly writers: Set<{ readonly wrote: (by: unknown) => void }>;
}

export const shared = (): Shared => ({ entries: [], writers: new Set() });

/** The shared log as a `Log.Kind`. */
export interface SharedKind extends Log.Kind {
  readonly error: LogError;
  readonly report: { firstSequence: number; baseRecordCount: number; lastSequence: number };
  readonly compaction: never;
  readonly view: Log.View<LogError>;
}

/** How a writer behaves. */
export interface WriterOptions {
  /** Waited before each group is written (microtasks, timers: the interleaving). */
  readonly delay?: () => Promise<void>;
  /** Runs right before each group's guard: another writer that always gets in first. */
  readonly interloper?: () => void;
  /**
   * Whether a conflict says the head is held for this writer's next append
   * (`AppendConflict.held`, as a PostgreSQL log's turn does); asked at each.
   */
  readonly held?: () => boolean;
  /** Where what the engine tells the log of its share (`Log.minorityWriter`) is recorded, in order. */
  readonly minority?: Array<boolean>;
  /** Tell this writer when others write (as LISTEN/NOTIFY would). Default true. */
  readonly notified?: boolean;
  /**
   * The generation this writer's `refresh` moves onto (as a PostgreSQL log
   * does after another engine's compaction); `generation()` answers it from
   * then on. The records stay where they are: a base of `baseRecordCount`
   * records from `firstSequence`.
   */
  readonly movesOnRefresh?: {
    readonly epoch: number;
    readonly firstSequence: number;
    readonly baseRecordCount?: number;
  };
  /** Awaited before each read of records (a catch-up held between its refresh and its fold). */
  readonly beforeRead?: () => Promise<void>;
  /**
   * Where a compaction this log would accept (its expected last sequence is
   * the log's) is recorded: the expected sequence and the base's events.
   * The log records compactions, it does not perform them: each is then
   * refused as `CompactionConflict`, and nothing changes.
   */
  readonly compactions?: Array<{
    readonly expected: number;
    readonly base: ReadonlyArray<Event.Event>;
  }>;
}

interface Queued {
  readonly records: ReadonlyArray<Batch.PendingRecord>;
  readonly expected: number;
  readonly ticket: Ticket.Ticket<LogError>;
}

/** A writer of `log`, opened now: the fold of what is there, and the log. */
export const open = (
  log: Shared,
  options: WriterOptions = {},
): Effect.Effect<Log.Recovered<Generation.Builder, SharedKind>, HistoryError.HistoryError> =>
  Effect.gen(function* () {
    const builder = Generation.start(0);
    for (const entry of log.entries) {
      const applied = Generation.apply(builder, entry.sequence, entry.event);
      if (applied._tag === "Left") return yield* Effect.fail(applied.left);
    }
    return { log: writer(log, options), state: builder, report: reportOf(log) };
  });

const reportOf = (log: Shared) => ({
  firstSequence: 1,
  baseRecordCount: 0,
  lastSequence: log.entries.length,
});

const writer = (log: Shared, options: WriterOptions): Log.Log<SharedKind> => {
  const path = "memory://shared";
  let assigned = log.entries.length;
  let committed = assigned;
  let pending: Array<Queued> = [];
  let writing = false;
  let idle: Array<() => void> = [];
  let generation: {
    readonly epoch: number;
    readonly firstSequence: number;
    readonly baseRecordCount?: number;
  } = { epoch: 1, firstSequence: 1, baseRecordCount: 0 };
  const listeners = new Set<() => void>();
  const self = {
    wrote: (by: unknown) => {
      if (by !== self && options.notified !== false) for (const listener of listeners) listener();
    },
  };
  log.writers.add(self);
  const write = async (): Promise<void> => {
    writing = true;
    while (pending.length > 0) {
      await (options.delay?.() ?? Promise.resolve());
      const group = pending;
      pending = [];
      const first = group[0];
      if (first === undefined) break;
      options.interloper?.();
      if (log.entries.length !== first.expected) {
        committed = log.entries.length;
        assigned = committed;
        const failed = [...group, ...pending];
        pending = [];
        for (const queued of failed) {
          Ticket.settle(
            queued.ticket,
            new AppendConflict({
              path,
              expectedLastSequence: queued.expected,
              lastSequence: committed,
              ...(options.held?.() === true ? { held: true } : {}),
            }),
          );
        }
        continue;
      }
      for (const queued of group) {
        for (const record of queued.records) {
          log.entries.push({ sequence: record.sequence, event: record.event });
        }
        committed = queued.ticket.lastSequence;
        Ticket.settle(queued.ticket, undefined);
      }
      for (const other of log.writers) other.wrote(self);
    }
    writing = false;
    const waiters = idle;
    idle = [];
    for (const waiter of waiters) waiter();
  };
  const view: Log.View<LogError> = {
    path,
    storeId: "shared",
    readFrom: (sequence, limit) =>
      Effect.zipRight(
        Effect.promise(() => options.beforeRead?.() ?? Promise.resolve()),
        Effect.sync(() =>
          log.entries.slice(sequence - 1, Math.min(committed, sequence - 1 + limit)),
        ),
      ),
    iterFrom: (sequence) =>
      Stream.fromIterableEffect(Effect.sync(() => log.entries.slice(sequence - 1, committed))),
    stats: () =>
      Effect.sync(() => ({
        records: committed,
        bytes: 0,
        firstSequence: 1,
        lastSequence: assigned,
        pendingRecords: 0,
        pendingBytes: 0,
      })),
    generation: () => Effect.sync(() => generation),
  };
  return {
    view,
    lastSequence: () => assigned,
    admission: () => ({ _tag: "Open" }),
    overBudget: () => undefined,
    append: (batch, expectedLastSequence) => {
      if (expectedLastSequence !== assigned) {
        return new AppendConflict({ path, expectedLastSequence, lastSequence: assigned });
      }
      for (const record of batch.records) {
        assigned += 1;
        record.sequence = assigned;
      }
      const ticket = Ticket.make<LogError>(assigned);
      pending.push({ records: batch.records, expected: expectedLastSequence, ticket });
      if (!writing) void write();
      return ticket;
    },
    compact: (base, expectedLastSequence) => {
      const recorded = options.compactions;
      if (recorded === undefined) return Effect.die("the shared log does not compact");
      const refused = new CompactionConflict({
        path,
        expectedLastSequence,
        lastSequence: assigned,
      });
      if (expectedLastSequence !== assigned) return Effect.fail(refused);
      return Effect.zipRight(
        Effect.sync(() => recorded.push({ expected: expectedLastSequence, base: [...base] })),
        Effect.fail(refused),
      );
    },
    flush: () => Effect.void,
    close: () => Effect.sync(() => log.writers.delete(self)),
    refresh: () =>
      Effect.gen(function* () {
        if (writing || pending.length > 0) {
          const done = yield* Deferred.make<void>();
          idle.push(() => Deferred.unsafeDone(done, Effect.void));
          yield* Deferred.await(done);
        }
        if (log.entries.length > committed) {
          committed = log.entries.length;
          assigned = committed;
        }
        if (options.movesOnRefresh !== undefined) generation = options.movesOnRefresh;
      }),
    watchOthers: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    minorityWriter: (minority) => {
      options.minority?.push(minority);
    },
  };
};

/** The shared records folded from scratch. */
export const folded = (log: Shared) => {
  const builder = Generation.start(0);
  for (const entry of log.entries) {
    Either.getOrThrow(toEither(Generation.apply(builder, entry.sequence, entry.event)));
  }
  return Either.getOrThrow(toEither(Generation.finish(builder)));
};

const toEither = <A>(
  result:
    | { readonly _tag: "Left"; readonly left: unknown }
    | { readonly _tag: "Right"; readonly right: A },
): Either.Either<A, unknown> =>
  result._tag === "Left" ? Either.left(result.left) : Either.right(result.right);

/** A gate the shared log's reads wait on: `reached` once a read waits, `open` lets it (and all after) go. */
export const readGate = () => {
  let held = true;
  let release = () => {};
  let reached = () => {};
  const opened = new Promise<void>((resolve) => {
    release = resolve;
  });
  const waiting = new Promise<void>((resolve) => {
    reached = resolve;
  });
  return {
    beforeRead: async () => {
      if (!held) return;
      reached();
      await opened;
    },
    reached: waiting,
    open: () => {
      held = false;
      release();
    },
  };
};

/** An interloper that, once, inserts job 1 in the shared log as another engine would. */
export const insertsOnce = (log: Shared) => {
  let interloped = false;
  return () => {
    if (interloped) return;
    interloped = true;
    const event = Event.jobInserted({
      jobId: 1,
      queue: "q",
      worker: "W",
      args: "theirs",
      priority: 0,
      maxAttempts: 1,
      scheduledAt: 0,
      insertedAt: 0,
    });
    log.entries.push({ sequence: 1, event });
  };
};

/** Another writer appends `count` inserts (job id and sequence together). */
export const othersAppend = (log: Shared, count: number): void => {
  for (let index = 0; index < count; index++) {
    const sequence = log.entries.length + 1;
    log.entries.push({ sequence, event: insertedEvent(sequence) });
  }
};

/** `count` inserts of `engine`'s own, one at a time (an insert of many jobs is one record). */
export const ownInserts = (engine: Engine.EngineService<SharedKind>, count: number) =>
  Effect.gen(function* () {
    for (let index = 0; index < count; index++) {
      yield* engine.insert({ queue: "own", worker: "W", args: index });
    }
  });

/**
 * Makes `engine` one of two even writers of `log`: 64 records of its own,
 * then 64 of another's folded by its next insert (one conflict). An engine
 * in no even race never steps aside (`conflictBackoffMs`).
 */
export const evenRace = (engine: Engine.EngineService<SharedKind>, log: Shared) =>
  Effect.gen(function* () {
    yield* ownInserts(engine, 64);
    othersAppend(log, 64);
    yield* engine.insert({ queue: "own", worker: "W", args: "folds them" });
  });
