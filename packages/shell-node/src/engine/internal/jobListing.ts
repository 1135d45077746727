/**
 * Listing jobs (`engine.jobs`): the jobs a state holds whole and, on a
 * lean state, the completed ones it holds as facts, whose records the
 * terminal index gives, merged by id in the order asked, at most `limit`,
 * within the ids `after` and `before` bound. Each walk starts at the first
 * id wanted in its order (the trie's subtrees and the fact pages outside
 * the bounds are passed over), and an index record is read only once it
 * is listed, so a page of a long listing costs its own jobs, not every
 * job before it (2026-12-06, docs/engine.md).
 */
import { Event, type Job, Query, State } from "@tay/core";

/** How to list jobs. */
export type JobFilter = Query.JobFilter;

/**
 * The whole record of a job a lean state holds as its facts (from the
 * terminal index, on the caller's thread), or undefined. Throws the
 * index's typed error when its disk or bytes fail after open.
 */
export type TerminalReader = (jobId: number) => Job.Job | undefined;

/** The ids a listing may hold: `first` to `last`, both included. */
interface Bounds {
  readonly first: number;
  readonly last: number;
  readonly descending: boolean;
}

const boundsOf = (filter: JobFilter): Bounds => ({
  first: filter.after === undefined ? 0 : Math.max(0, Math.floor(filter.after) + 1),
  last: filter.before === undefined ? Number.MAX_SAFE_INTEGER : Math.ceil(filter.before) - 1,
  descending: filter.order === "desc",
});

const within = (bounds: Bounds, jobId: number): boolean =>
  jobId >= bounds.first && jobId <= bounds.last;

/** The active jobs of `wanted` (from the state's indexes), in the listing's order. */
function* activeJobs(
  state: State.State,
  wanted: Job.Job["state"],
  queue: string | undefined,
  bounds: Bounds,
): Generator<Job.Job> {
  const ascending = Query.jobsIn(state, wanted, queue);
  for (let at = 0; at < ascending.length; at++) {
    const job = ascending[bounds.descending ? ascending.length - 1 - at : at];
    if (job !== undefined && within(bounds, job.jobId)) yield job;
  }
}

/**
 * The jobs of `state` that `filter` wants, whole ones only, in the
 * listing's order. The walk of every job starts at the bound it meets
 * first; the active states' indexes hold active jobs only.
 */
function* wholeJobs(state: State.State, filter: JobFilter, bounds: Bounds): Generator<Job.Job> {
  const wanted = filter.state;
  if (wanted !== undefined && !Event.isTerminal(wanted)) {
    yield* activeJobs(state, wanted, filter.queue, bounds);
    return;
  }
  const walk = bounds.descending
    ? State.jobsDownFrom(state, bounds.last)
    : State.jobsFrom(state, bounds.first);
  for (const job of walk) {
    if (!within(bounds, job.jobId)) return;
    if (filter.queue !== undefined && job.queue !== filter.queue) continue;
    if (wanted === undefined || job.state === wanted) yield job;
  }
}

/**
 * The ids of the jobs `state` holds as facts that `filter` wants, in the
 * listing's order (facts are completed jobs: no other state asks for them).
 */
function* factIds(state: State.State, filter: JobFilter, bounds: Bounds): Generator<number> {
  if (filter.state !== undefined && filter.state !== "completed") return;
  const walk = bounds.descending
    ? state.terminal.entriesDownFrom(bounds.last)
    : state.terminal.entriesFrom(bounds.first);
  for (const [jobId, fact] of walk) {
    if (!within(bounds, jobId)) return;
    if (filter.queue === undefined || fact.queue === filter.queue) yield jobId;
  }
}

/**
 * The listing of a full state from a lean one: its whole jobs and the
 * index's, merged by id, each index record read only once it is listed
 * (a `limit` reads no more than it lists).
 */
export const listJobs = (
  state: State.State,
  filter: JobFilter = {},
  terminal?: TerminalReader,
): ReadonlyArray<Job.Job> => {
  const bounds = boundsOf(filter);
  const whole = wholeJobs(state, filter, bounds);
  const limit = filter.limit ?? Number.POSITIVE_INFINITY;
  const listed: Array<Job.Job> = [];
  const ids =
    terminal === undefined || state.terminal.size === 0
      ? undefined
      : factIds(state, filter, bounds);
  let next = ids?.next();
  let job = whole.next();
  // Whether the whole job comes before the fact in the listing's order.
  const first = (jobId: number, factId: number) =>
    bounds.descending ? jobId > factId : jobId < factId;
  while (listed.length < limit) {
    if (next === undefined || next.done === true) {
      if (job.done === true) break;
      listed.push(job.value);
      job = whole.next();
    } else if (job.done !== true && first(job.value.jobId, next.value)) {
      listed.push(job.value);
      job = whole.next();
    } else if (terminal !== undefined) {
      const read = terminal(next.value);
      if (read !== undefined) listed.push(read);
      next = ids?.next();
    }
  }
  return listed;
};
