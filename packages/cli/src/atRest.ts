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
import { type Generation, type HistoryError, Job, State } from "@tay/core";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import {
  Disk,
  type Projection,
  type Recovery,
  StateProjection,
  TerminalIndex,
} from "@tay/shell-node";
import { RecordNotKept } from "./CliError.js";
import { type InspectError, inspect, tapped } from "./inspect.js";
import { type Filter, factIds, foldForListing, wants } from "./listingFold.js";
import { type Tail, TailFold } from "./restTail.js";

/** A store read at rest: its state, lean with the index that holds its completed jobs, or whole. */
export interface AtRest {
  readonly state: State.State;
  readonly report: Recovery.RecoveryReport;
  /**
   * The terminal index, current for `state` (which is then lean), or for an
   * earlier sequence with `tail` holding what was let go after it;
   * undefined for a whole state.
   */
  readonly index: TerminalIndex.TerminalIndex | undefined;
  /** The completed jobs let go after the index's sequence (`restTail.ts`), when it is behind. */
  readonly tail?: Tail | undefined;
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
  /** The listing the caller makes (`tay jobs`, `tay job`: `oneJob`): without a usable index, only the records it can print are kept. */
  listing?: Filter,
): Effect.Effect<A, X | InspectError | TerminalIndex.TerminalIndexError, Disk.Disk | R> =>
  Effect.acquireUseRelease(
    opened(directory, needsFacts, tap, listing),
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

/**
 * The lean state of the store in `directory` at rest, resumed from its state
 * image when it can be: what the commands that need no completed job's
 * record read (`status`, `queues`, `schedules`; counts, queue states and
 * schedules are whole in it, issue 19). `queues` and `schedules` folded
 * every job whole until 2026-12-07: 4.4 s and 600 MB on a store of
 * 1,000,000 jobs, against `status`'s 1.4 s and 154 MB.
 */
export const leanStateAt = (
  directory: string,
): Effect.Effect<State.State, InspectError | TerminalIndex.TerminalIndexError, Disk.Disk> =>
  withAtRest(directory, false, ({ state }) => Effect.succeed(state));

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
  listing: Filter | undefined,
): Effect.Effect<AtRest, InspectError, Disk.Disk> =>
  Effect.gen(function* () {
    // No HEAD, or one of another store: the whole fold at once, as before the index.
    const found = yield* TerminalIndex.peek(directory);
    if (needsFacts && "_tag" in found) {
      return yield* withoutIndex(directory, tap, listing);
    }
    // Without a tap (no job's history is wanted), the fold resumes from the
    // state image the engine's last close or checkpoint wrote, as the
    // engine's open does (docs/store.md, "The state image"); the records it
    // covers are still read and checked, each segment against the image's CRC.
    const image =
      tap === noTap ? yield* TerminalIndex.peekImage(directory, found) : "a job's history is read";
    const tailFold = needsFacts && tap === noTap ? new TailFold(found, image) : undefined;
    const lean =
      tap !== noTap
        ? yield* fold(directory, tap, StateProjection.leanFoldProjection)
        : yield* inspect(
            directory,
            tailFold?.projection ?? StateProjection.resumingLeanFold(found, image),
            "onTrust",
          );
    if (!needsFacts || lean.state.terminal.size === 0) return { ...lean, index: undefined };
    const { storeId, epoch, lastSequence } = lean.report;
    // Resumed from HEAD's image: the index as HEAD left it, the jobs let go
    // after it from the fold (docs/cli.md, "Read commands after a crash").
    const tail = tailFold?.tail();
    const through = tail?.through ?? lastSequence;
    // The index is disposable: one the disk will not read is not used either.
    const index = yield* Effect.either(
      TerminalIndex.openReadOnly(directory, { storeId, epoch, lastSequence: through }),
    );
    if (Either.isRight(index) && TerminalIndex.isIndex(index.right)) {
      return { ...lean, index: index.right, tail };
    }
    return yield* withoutIndex(directory, tap, listing);
  });

/**
 * The answer without the index: the whole fold; or, for a listing
 * (`listing`: `tay jobs`, and `tay job` as the listing of one id), a lean
 * fold that keeps the records it can print as they leave the state
 * (`foldForListing`; one job since 2026-12-05, any listing since
 * 2026-12-07: the memory of a lean state and of the page asked for, not of
 * every job). A fact the listing reaches whose record that fold did not
 * keep (core always hands it over) gets the whole fold.
 */
const withoutIndex = (
  directory: string,
  tap: Tap,
  listing: Filter | undefined,
): Effect.Effect<AtRest, InspectError, Disk.Disk> =>
  Effect.gen(function* () {
    if (listing === undefined) {
      return { ...(yield* fold(directory, tap, StateProjection.foldProjection)), index: undefined };
    }
    const { folded, kept, lean } = yield* foldForListing(listing, (projection) =>
      fold(directory, tap, projection),
    );
    if (!lean) return { ...folded, index: undefined };
    return {
      ...folded,
      index: undefined,
      tail: keptTail(directory, folded.report.lastSequence, kept),
    };
  });

/** The records a lean fold kept, as the tail a listing reads them from (no index behind it). */
export const keptTail = (
  store: string,
  through: number,
  jobs: ReadonlyMap<number, Job.Job>,
): Tail => ({ through, jobs, results: new Map(), keptFrom: store });

/**
 * The whole record of a job the lean state holds as facts, from the index
 * (never absent), with a result the tail recorded after it (`jobAt` took
 * the tail's own jobs first).
 */
const recordOf = (
  index: TerminalIndex.TerminalIndex,
  tail: Tail | undefined,
  jobId: number,
): Either.Either<Job.Job, TerminalIndex.TerminalIndexError> => {
  return Either.flatMap(TerminalIndex.lookupNow(index, jobId), (job) =>
    job === undefined ? Either.left(noEntry(index, jobId)) : Either.right(withResult(tail, job)),
  );
};

/** `job` as the index holds it, with the result the tail recorded after the index's sequence. */
const withResult = (tail: Tail | undefined, job: Job.Job): Job.Job => {
  const result = tail?.results.get(job.jobId);
  return result === undefined ? job : Job.applied(job, result);
};

/** A fact the index holds no entry of. */
const noEntry = (index: TerminalIndex.TerminalIndex, jobId: number) =>
  new TerminalIndex.TerminalIndexCorrupt({
    path: index.path,
    offset: index.end,
    reason: `no entry for completed job ${jobId}`,
  });

/** One job, whole or from the index, or undefined. */
export const jobAt = (
  atRest: AtRest,
  jobId: number,
): Either.Either<Job.Job | undefined, TerminalIndex.TerminalIndexError> => {
  const whole = State.job(atRest.state, jobId) ?? atRest.tail?.jobs.get(jobId);
  if (whole !== undefined || atRest.index === undefined) return Either.right(whole);
  if (State.fact(atRest.state, jobId) === undefined) return Either.right(undefined);
  return recordOf(atRest.index, atRest.tail, jobId);
};

/**
 * What a listing reads: a state, and where its facts' records are: the
 * index (and the tail let go after it), or the tail alone (a lean fold
 * that kept them, `foldForListing`); a whole state has no facts.
 */
export type Listable = Pick<AtRest, "state" | "index" | "tail">;

/** Jobs per page of a listing, and ids per read from the index. */
const pageIds = 1024;

/** The jobs `state` holds whole that `filter` wants, in its order, walked from its bound. */
function* wholeJobs(state: State.State, filter: Filter): Generator<Job.Job> {
  const walk = filter.descending
    ? State.jobsDownFrom(state, filter.last)
    : State.jobsFrom(state, filter.first);
  for (const job of walk) {
    if (job.jobId < filter.first || job.jobId > filter.last) return;
    if (wants(filter, job)) yield job;
  }
}

/**
 * The jobs `filter` wants, by id (ascending, or descending), at most `limit`, handed to
 * `page` a page of at most 1,024 at a time: the whole ones and (a lean
 * state) the facts', merged by id; the records of a page's facts taken
 * from the tail, or read from the index at once (`lookupPageNow`: one read per span of entries,
 * 2026-12-04; one read per job took ~1.9 of the 10.8 s of CPU of listing
 * 300,000 completed jobs). A page is let go once `page` is done with it:
 * listing 1,000,000 completed jobs held every record (1.5 GB) before
 * 2026-12-06, and its JSON did not fit in one string.
 */
export const listed = <X, R>(
  atRest: Listable,
  filter: Filter,
  page: (jobs: ReadonlyArray<Job.Job>) => Effect.Effect<void, X, R>,
): Effect.Effect<void, X | TerminalIndex.TerminalIndexError | RecordNotKept, R> =>
  Effect.gen(function* () {
    const { state } = atRest;
    const whole = wholeJobs(state, filter);
    // Whether the whole job comes before the fact in the listing's order.
    const before = (jobId: number, factId: number) =>
      filter.descending ? jobId > factId : jobId < factId;
    // A whole state has no facts; a lean one's records come from its index, or from its tail alone.
    const ids = factIds(state, filter);
    let next = ids.next();
    let job = whole.next();
    let listedCount = 0;
    // A whole job, or the id of a fact whose record the index or the tail holds.
    let picked: Array<Job.Job | number> = [];
    while (listedCount < filter.limit) {
      const fact = next === undefined || next.done === true ? undefined : next.value;
      if (job.done === true && fact === undefined) break;
      if (job.done !== true && (fact === undefined || before(job.value.jobId, fact))) {
        picked.push(job.value);
        job = whole.next();
      } else if (fact !== undefined) {
        picked.push(fact);
        next = ids.next();
      }
      listedCount++;
      if (picked.length < pageIds) continue;
      yield* page(yield* resolved(atRest, picked));
      picked = [];
    }
    if (picked.length > 0) yield* page(yield* resolved(atRest, picked));
  });

/** The jobs of `picked`, the facts' records read from the index. */
const resolved = (
  atRest: Listable,
  picked: ReadonlyArray<Job.Job | number>,
): Either.Either<ReadonlyArray<Job.Job>, TerminalIndex.TerminalIndexError | RecordNotKept> => {
  const { index, tail } = atRest;
  const records =
    index === undefined
      ? Either.right(tail?.jobs ?? new Map<number, Job.Job>())
      : recordsOf(index, tail, picked.filter(isId));
  if (Either.isLeft(records)) return Either.left(records.left);
  const jobs: Array<Job.Job> = [];
  for (const pick of picked) {
    if (isJob(pick)) {
      jobs.push(pick);
      continue;
    }
    const job = records.right.get(pick);
    if (job === undefined) {
      return Either.left(
        index === undefined
          ? new RecordNotKept({ path: tail?.keptFrom, jobId: pick })
          : noEntry(index, pick),
      );
    }
    jobs.push(job);
  }
  return Either.right(jobs);
};

const isJob = (pick: Job.Job | number): pick is Job.Job => typeof pick !== "number";

const isId = (pick: Job.Job | number): pick is number => typeof pick === "number";

/**
 * The whole records of completed jobs `jobIds`, by id (each one present):
 * from the tail, else from the index.
 */
const recordsOf = (
  index: TerminalIndex.TerminalIndex,
  tail: Tail | undefined,
  jobIds: ReadonlyArray<number>,
): Either.Either<ReadonlyMap<number, Job.Job>, TerminalIndex.TerminalIndexError> => {
  const records = new Map<number, Job.Job>();
  const indexed: Array<number> = [];
  for (const jobId of jobIds) {
    const late = tail?.jobs.get(jobId);
    if (late === undefined) indexed.push(jobId);
    else records.set(jobId, late);
  }
  for (let from = 0; from < indexed.length; from += pageIds) {
    const page = indexed.slice(from, from + pageIds);
    const read = TerminalIndex.lookupPageNow(index, page);
    if (Either.isLeft(read)) return Either.left(read.left);
    for (const [position, jobId] of page.entries()) {
      const job = read.right[position];
      if (job === undefined) return Either.left(noEntry(index, jobId));
      records.set(jobId, withResult(tail, job));
    }
  }
  return Either.right(records);
};
