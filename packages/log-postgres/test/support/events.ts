/**
 * What the log's own suites append and how they run a scoped program: a
 * plain (1,1) insert per job id, and `run` for an Effect that needs a Scope.
 */
import { Event } from "@tay/core";
import { Effect, type Scope } from "effect";

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
