/**
 * Waiting for a job of an embedded engine to end: `JobEnd.whenEnded(engine,
 * jobId)` resolves with the job once it is completed, discarded or
 * cancelled, as `Client.whenEnded` does over a server (both are
 * `@tay/client`'s `JobEnds`, here over the engine's commit watch). One
 * watch per engine serves every waiting call. The watch is in place when
 * the call returns, so the job is read at once and no end falls between
 * the read and the watch.
 *
 * A call still waiting when its engine closes rejects with `StoreClosed`
 * (naming the engine's log) once the engine has closed.
 */
import { JobEnds } from "@tay/client";
import type { Job } from "@tay/core";
import type * as Log from "../log/Log.js";
import type { PromiseFace } from "./Engine.js";
import { StoreClosed } from "../log/LogError.js";
import type { FileLogKind } from "../store/FileLog.js";

type Face<K extends Log.Kind> = Pick<PromiseFace<K>, "watch" | "job"> &
  Partial<Pick<PromiseFace<K>, "closed">> & { readonly log?: { readonly path?: string } };

const ready = Promise.resolve();

// Per engine face: the waiting calls and their one watch.
const perEngine = new WeakMap<object, JobEnds.JobEnds>();

const endsOf = <K extends Log.Kind>(engine: Face<K>): JobEnds.JobEnds => {
  const known = perEngine.get(engine);
  if (known !== undefined) return known;
  const made = new JobEnds.JobEnds({
    watch: (listener) => ({
      ready,
      stop: engine.watch((records) => listener(records.map((record) => record.event))),
    }),
    job: (jobId) => engine.job(jobId),
  });
  perEngine.set(engine, made);
  void engine.closed?.then(() => {
    perEngine.delete(engine);
    made.close(new StoreClosed({ path: engine.log?.path ?? "the engine's store" }));
  });
  return made;
};

/**
 * Resolves with the job once it has ended (at once if it has); rejects
 * with `UnknownJob` for a job the engine does not have, and with the
 * signal's reason when aborted.
 */
export const whenEnded = <K extends Log.Kind = FileLogKind>(
  engine: Face<K>,
  jobId: number,
  options: { readonly signal?: AbortSignal } = {},
): Promise<Job.Job> => endsOf(engine).whenEnded(jobId, options);

/** Calls waiting on `engine` now (for tests: none is left behind). */
export const waiting = <K extends Log.Kind>(engine: Face<K>): number =>
  perEngine.get(engine)?.waiting ?? 0;
