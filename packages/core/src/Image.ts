/**
 * A folded state as what re-creates it (docs/core.md, "Resuming a fold"):
 * the shell keeps one beside its log so that an open resumes the fold
 * instead of redoing it (docs/store.md, "The state image").
 *
 * An image is the state's canonical base with nothing dropped
 * (`Snapshot.events`: the jobs held whole, their results, the schedules
 * and the queue states), plus the three things a base does not carry: the
 * facts a lean state keeps of its completed jobs, the rate-limit window of
 * each limited queue, and whether the folded history used schema 3.
 * `Generation.resume` folds it back: the state it gives, and every verdict
 * on the records after it, are the full fold's.
 */
import type { Event } from "./Event.js";
import * as Snapshot from "./Snapshot.js";
import type { State } from "./State.js";
import { FactMapBuilder, type Packed } from "./internal/FactMap.js";
import type { Fact } from "./Terminal.js";

/** What re-creates a folded state. */
export interface Image {
  /** `Snapshot.events` of the state, nothing dropped: always starts with part 0. */
  readonly base: Iterable<Event>;
  /** The facts of a lean state's completed jobs, packed as the state holds them (none for a full state). */
  readonly facts: Facts;
  /** Per rate-limited queue: the `at` of its latest starts, in log order. */
  readonly starts: Iterable<readonly [string, ReadonlyArray<number>]>;
  /** Whether the folded history holds a schema-3 record. */
  readonly schema3: boolean;
}

/**
 * Facts as a lean state packs them (docs/core.md, "Packed facts"): the
 * queue names in the order the slots count them, pages of 256 slots by
 * page number, and the facts that do not pack. An image carries the pages
 * as they are, so a resume takes them over instead of binding a million
 * facts one by one.
 */
export type Facts = Packed;

/**
 * The packed form of `entries` (ascending ids, as `State.terminal`
 * lists them): what a test or a tool builds an image's facts from. An id
 * that is no integer >= 0 goes to the overflow as it is, for `resume` to
 * refuse.
 */
export const factsOf = (entries: Iterable<readonly [number, Fact]>): Facts => {
  const builder = new FactMapBuilder();
  const odd: Array<readonly [number, Fact]> = [];
  for (const [jobId, fact] of entries) {
    if (Number.isSafeInteger(jobId) && jobId >= 0) builder.set(jobId, fact);
    else odd.push([jobId, fact]);
  }
  const packed = builder.toFactMap().packed();
  return odd.length === 0 ? packed : { ...packed, overflow: [...packed.overflow, ...odd] };
};

// A base that keeps every job: nothing finished before minus infinity.
const keepEverything: Snapshot.Options = { now: 0, retentionMs: Number.POSITIVE_INFINITY };

/**
 * The image of `state`, produced on demand (each part read when iterated).
 * Read it before anything evolves a state from `state` in a batch: a
 * batch's run may write in place the nodes and fact pages it made
 * (`Evolve.batch`), so a state it published can change under a late
 * reader. `frozen` is the image to read later.
 */
export const of = (state: State): Image => ({
  base: { [Symbol.iterator]: () => Snapshot.events(state, keepEverything) },
  facts: state.terminal.packed(),
  starts: { [Symbol.iterator]: () => state.indexes.starts.entries() },
  schema3: state.indexes.schema3,
});

/** Jobs per snapshot part of a `frozen` image: about 2 ms to encode each, at ~450 bytes a job. */
export const frozenPartJobs = 256;

/**
 * The image of `state` as it is now, to be read later, while later states
 * are evolved from it (docs/store.md, "Checkpoints without a stall"): its
 * base's events made now, in parts of `frozenPartJobs` jobs (they hold the
 * job records, which no evolution changes: a change copies the record),
 * the facts' pages copied, the rate-limit windows copied. What is left to
 * do when it is read is encoding, the bulk of an image's cost.
 */
export const frozen = (state: State): Image => {
  const packed = state.terminal.packed();
  return {
    base: [...Snapshot.events(state, keepEverything, undefined, frozenPartJobs)],
    facts: {
      queues: [...packed.queues],
      pages: Array.from(packed.pages, ([number, slots]) => [number, slots.slice()] as const),
      overflow: [...packed.overflow],
    },
    starts: Array.from(state.indexes.starts.entries(), ([queue, at]) => [queue, [...at]] as const),
    schema3: state.indexes.schema3,
  };
};
