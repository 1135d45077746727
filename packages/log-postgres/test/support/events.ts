/**
 * What the log's own suites append and how they run a scoped program: a
 * plain (1,1) insert per job id, an append after what a log knows, and
 * `run` for an Effect that needs a Scope.
 */
import { Event } from "@tay/core";
import type { PgLog } from "@tay/log-postgres";
import { Batch, type Log, LogError, Ticket } from "@tay/shell-node";
import { Effect, Either, type Scope } from "effect";

/** Runs a scoped program to its promise. */
export const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>): Promise<A> =>
  Effect.runPromise(Effect.scoped(effect));

/** A plain insert of `jobId` on `default`, its args naming it. */
export const inserted = (jobId: number): Event.Event =>
  Event.jobInserted({
    jobId,
    queue: "default",
    worker: "W",
    args: `job ${jobId}`,
    priority: 0,
    maxAttempts: 1,
    scheduledAt: 0,
    insertedAt: 0,
  });

/** Appends `events` after what `log` knows; fails with the append's refusal. */
export const append = (log: Log.Log<PgLog.PgKind>, events: ReadonlyArray<Event.Event>) =>
  Effect.gen(function* () {
    const ticket = log.append(Either.getOrThrow(Batch.prepare(events)), log.lastSequence());
    if (ticket instanceof LogError.AppendConflict) return yield* Effect.fail(ticket);
    yield* Ticket.wait(ticket);
  });
