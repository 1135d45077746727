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
import type { Fact } from "./Terminal.js";

/** What re-creates a folded state. */
export interface Image {
  /** `Snapshot.events` of the state, nothing dropped: always starts with part 0. */
  readonly base: Iterable<Event>;
  /** The facts of a lean state's completed jobs, by id (none for a full state). */
  readonly facts: Iterable<readonly [number, Fact]>;
  /** Per rate-limited queue: the `at` of its latest starts, in log order. */
  readonly starts: Iterable<readonly [string, ReadonlyArray<number>]>;
  /** Whether the folded history holds a schema-3 record. */
  readonly schema3: boolean;
}

// A base that keeps every job: nothing finished before minus infinity.
const keepEverything: Snapshot.Options = { now: 0, retentionMs: Number.POSITIVE_INFINITY };

/**
 * The image of `state`, produced on demand (each part read when iterated;
 * the state is persistent, so the image stays valid while it is read).
 */
export const of = (state: State): Image => ({
  base: { [Symbol.iterator]: () => Snapshot.events(state, keepEverything) },
  facts: { [Symbol.iterator]: () => state.terminal.entries() },
  starts: { [Symbol.iterator]: () => state.indexes.starts.entries() },
  schema3: state.indexes.schema3,
});
