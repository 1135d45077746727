/**
 * The read commands on a store at rest through its terminal index (issue
 * 19): `status`, `jobs` and `job` fold the log lean (every byte validated
 * as by any open, completed jobs kept as facts only, no record of theirs
 * in memory), and the completed jobs a listing or a lookup needs are read
 * from `DATA_DIR/terminal-index/`, opened read-only, only when its HEAD
 * names the store, epoch and last sequence just folded and every entry it
 * vouches for checks. When the index is missing or stale (a store another
 * process holds and has appended to, an index deleted, an engine killed),
 * the log is folded again whole, as before the index existed (so is it when
 * the disk fails to read the index): an answer is never taken from an index
 * that does not match the log, and nothing is written. A state without facts needs no index at all.
 */
import type { Event, Generation, HistoryError, Job } from "@tay/core";
import { State } from "@tay/core";
import { Effect, Either } from "effect";
import {
  Disk,
  type Projection,
  type Recovery,
  StateProjection,
  TerminalIndex,
} from "@tay/shell-node";
import { type InspectError, inspect, tapped } from "./inspect.js";

/** A store read at rest: its state, lean with the index that holds its completed jobs, or whole. */
export interface AtRest {
  readonly state: State.State;
  readonly report: Recovery.RecoveryReport;
  /** The terminal index, current for `state` (which is then lean); undefined for a whole state. */
  readonly index: TerminalIndex.TerminalIndex | undefined;
}

/** Watches the fold: each (re)start, and each record it accepts. */
export interface Tap {
  readonly onStart: () => void;
  readonly onRecord: (entry: Projection.Entry) => void;
}

const noTap: Tap = { onStart: () => {}, onRecord: () => {} };

// Sealed segments' records on trust of their segment CRC, as the engine's
// open reads them, checked record by record on any failure (2026-12-04:
// ~20% of `tay status` on 1,000,000 jobs was the records' own CRCs);
// `tay verify` checks every record.
const fold = (
  directory: string,
  tap: Tap,
  projection: Projection.Projection<Generation.Builder, HistoryError.HistoryError>,
) => inspect(directory, tapped(tap.onStart, tap.onRecord, projection), "onTrust");

/**
 * Opens the store in `directory` at rest as the module says, runs `use`
 * on it, and closes the index (if one was opened) however `use` ends.
 * `needsFacts` false: the lean state alone answers (`status`, a listing
 * of states other than completed), no index is read.
 */
export const withAtRest = <A, X, R>(
  directory: string,
  needsFacts: boolean,
  use: (atRest: AtRest) => Effect.Effect<A, X, R> | Either.Either<A, X>,
  tap: Tap = noTap,
): Effect.Effect<A, X | InspectError | TerminalIndex.TerminalIndexError, Disk.Disk | R> =>
  Effect.acquireUseRelease(
    opened(directory, needsFacts, tap),
    (atRest) =>
      atRest.index === undefined
        ? run(use, atRest)
        : // The index's entries are checked as they are read (the offsets
          // saved with HEAD spare the walk of every entry, 2026-12-04): one
          // that fails, or a disk that will not read it, leaves the answer
          // to the whole fold, as an index that fails at open does.
          Effect.catchIf(run(use, atRest), isIndexFault, () =>
            Effect.flatMap(fold(directory, tap, StateProjection.foldProjection), (whole) =>
              run(use, { ...whole, index: undefined }),
            ),
          ),
    ({ index }) => (index === undefined ? Effect.void : Effect.ignore(TerminalIndex.close(index))),
  );

const run = <A, X, R>(
  use: (atRest: AtRest) => Effect.Effect<A, X, R> | Either.Either<A, X>,
  atRest: AtRest,
): Effect.Effect<A, X, R> => {
  const used = use(atRest);
  return Either.isEither(used) ? Effect.suspend(() => used) : used;
};

/** An error of the index's own reads: the entries failed a check, or the disk would not read them. */
const isIndexFault = (error: unknown): boolean =>
  error instanceof TerminalIndex.TerminalIndexCorrupt || error instanceof Disk.DiskError;

const opened = (
  directory: string,
  needsFacts: boolean,
  tap: Tap,
): Effect.Effect<AtRest, InspectError, Disk.Disk> =>
  Effect.gen(function* () {
    // No HEAD, or one of another store: the whole fold at once, as before the index.
    const found = yield* TerminalIndex.peek(directory);
    if (needsFacts && "_tag" in found) {
      return { ...(yield* fold(directory, tap, StateProjection.foldProjection)), index: undefined };
    }
    const lean = yield* fold(directory, tap, StateProjection.leanFoldProjection);
    if (!needsFacts || lean.state.terminal.size === 0) return { ...lean, index: undefined };
    const { storeId, epoch, lastSequence } = lean.report;
    // The index is disposable: one the disk will not read is not used either.
    const index = yield* Effect.either(
      TerminalIndex.openReadOnly(directory, { storeId, epoch, lastSequence }),
    );
    if (Either.isRight(index) && TerminalIndex.isIndex(index.right)) {
      return { ...lean, index: index.right };
    }
    return { ...(yield* fold(directory, tap, StateProjection.foldProjection)), index: undefined };
  });

/** The whole record of a job the lean state holds as facts, from the index (never absent). */
const recordOf = (
  index: TerminalIndex.TerminalIndex,
  jobId: number,
): Either.Either<Job.Job, TerminalIndex.TerminalIndexError> =>
  Either.flatMap(TerminalIndex.lookupNow(index, jobId), (job) =>
    job === undefined
      ? Either.left(
          new TerminalIndex.TerminalIndexCorrupt({
            path: index.path,
            offset: index.end,
            reason: `no entry for completed job ${jobId}`,
          }),
        )
      : Either.right(job),
  );

/** One job, whole or from the index, or undefined. */
export const jobAt = (
  atRest: AtRest,
  jobId: number,
): Either.Either<Job.Job | undefined, TerminalIndex.TerminalIndexError> => {
  const whole = State.job(atRest.state, jobId);
  if (whole !== undefined || atRest.index === undefined) return Either.right(whole);
  if (State.fact(atRest.state, jobId) === undefined) return Either.right(undefined);
  return recordOf(atRest.index, jobId);
};

/** Which jobs a listing wants. */
export interface Filter {
  readonly queue: string | undefined;
  readonly state: Event.JobState | undefined;
  readonly limit: number;
}

const wanted = (job: Job.Job, filter: Filter): boolean =>
  (filter.queue === undefined || job.queue === filter.queue) &&
  (filter.state === undefined || job.state === filter.state);

/** Ids of the facts a listing wants, ascending (facts are completed jobs). */
function* factIds(state: State.State, filter: Filter): Generator<number> {
  if (filter.state !== undefined && filter.state !== "completed") return;
  for (const [jobId, fact] of state.terminal.entries()) {
    if (filter.queue === undefined || fact.queue === filter.queue) yield jobId;
  }
}

/**
 * The jobs `filter` wants, ascending by id, at most `limit`: the whole
 * ones and (a lean state) the index's, merged by id, each record read only
 * once it is listed.
 */
export const listed = (
  atRest: AtRest,
  filter: Filter,
): Either.Either<ReadonlyArray<Job.Job>, TerminalIndex.TerminalIndexError> => {
  const { state, index } = atRest;
  const whole = [...State.jobs(state)].filter((job) => wanted(job, filter));
  const jobs: Array<Job.Job> = [];
  const ids = index === undefined ? undefined : factIds(state, filter);
  let next = ids?.next();
  let at = 0;
  while (jobs.length < filter.limit) {
    const job = whole[at];
    const fact = next === undefined || next.done === true ? undefined : next.value;
    if (job === undefined && fact === undefined) break;
    if (fact === undefined || (job !== undefined && job.jobId < fact)) {
      if (job !== undefined) jobs.push(job);
      at++;
      continue;
    }
    if (index === undefined) break;
    const read = recordOf(index, fact);
    if (Either.isLeft(read)) return Either.left(read.left);
    jobs.push(read.right);
    next = ids?.next();
  }
  return Either.right(jobs);
};
