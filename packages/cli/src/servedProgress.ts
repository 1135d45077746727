/**
 * The progress a running attempt reported, for `tay job DIR ID`: it lives
 * in the memory of the engine that holds the store (docs/engine.md,
 * "Progress"), not in its files, so a read at rest asks the store's server
 * for it when one holds the store and the job is executing. No server, or
 * a job not executing: nothing to ask. A server that does not answer is
 * said, not taken for "no progress".
 */
import type { Job, Progress } from "@tay/core";
import { Locate } from "@tay/client";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { Described } from "@tay/shell-node";
import { clientOf, failureOf } from "./served.js";

/** What the store's server says of a job's progress. */
export type ServedProgress =
  | { readonly _tag: "NotAsked" }
  | { readonly _tag: "Held"; readonly progress: Progress.Progress | undefined }
  | { readonly _tag: "Unknown"; readonly why: string };

const notAsked: ServedProgress = { _tag: "NotAsked" };

/** The progress of `job`'s executing attempt, as the server of `directory` holds it. */
export const servedProgress = (directory: string, job: Job.Job): Effect.Effect<ServedProgress> => {
  const served = job.state === "executing" ? Locate.servedAt(directory) : null;
  if (served === null) return Effect.succeed(notAsked);
  const asked = Effect.scoped(
    Effect.flatMap(clientOf(served.socket), (client) =>
      Effect.tryPromise({ try: () => client.progress(job.jobId), catch: failureOf(served.socket) }),
    ),
  );
  return Effect.map(Effect.either(asked), (answer): ServedProgress => {
    if (Either.isLeft(answer)) {
      return { _tag: "Unknown", why: Described.line(answer.left.description) };
    }
    // A report of an earlier attempt is not this one's (it ended meanwhile).
    const progress = answer.right?.attempt === job.attempt ? answer.right : undefined;
    return { _tag: "Held", progress };
  });
};
