/**
 * What recovery folds the history into. The store validates bytes and
 * sequences and decodes events; what the events mean is the projection's
 * business (the engine passes core's fold; tests pass `collect`).
 */
import type { Event } from "@tay/core";
import type * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type { Disk } from "../disk/Disk.js";
import type { Manifest as ManifestModule } from "@tay/codec";

/** A generation's manifest (where its first sequence and canonical base are). */
export type Manifest = ManifestModule.Manifest;

/**
 * A left fold over one generation's records, in sequence order. `start`
 * receives the manifest (so the projection can check the canonical base:
 * the first `baseRecordCount` records); `apply` returns the next state or
 * its own error value, which recovery reports as `HistoryRejected`.
 */
export interface Projection<S, E> {
  readonly start: (manifest: Manifest) => S;
  readonly apply: (state: S, sequence: number, event: Event.Event) => Either.Either<S, E>;
  /**
   * Optional, run by the file store's recovery after each batch of records
   * it folded (at most 1,024): where a projection that stages output for
   * disk writes some of it, so that what it stages stays bounded (the
   * engine's terminal index rebuilt by the open's fold). Never fails.
   */
  readonly between?: (state: S) => Effect.Effect<void, never, Disk>;
  /**
   * Optional, asked by the file store's trusting pass at open
   * (`validateOnTrust`): a state that already folded the records of the
   * segments `segments` names, through sequence `through` (the engine's
   * state image, docs/store.md). Those records are then validated but not
   * decoded or applied; if the scan finds any of those segments other than
   * named, the pass fails and the whole validation runs again with `start`.
   */
  readonly resume?: (manifest: Manifest) => Resumed<S> | undefined;
  /**
   * Optional: the projection wants only the records whose payload holds
   * one of these byte strings (codec `JobMention`: one job's history). The
   * file store's recovery then validates every record as always but
   * decodes and applies only those (and perhaps others: `apply` filters).
   * Such a projection folds no state a decision could rest on.
   */
  readonly needles?: ReadonlyArray<Uint8Array>;
}

/** A file log's segment as a fold read it: its records, where they end, the CRC of the bytes before. */
export interface SegmentDigest {
  /** The segment's ID (its file name). */
  readonly id: number;
  /** Records in it. */
  readonly records: number;
  /** Where its records end: the footer's offset when sealed, else its size. */
  readonly end: number;
  /** CRC-32C of its bytes [0, end). */
  readonly crc: number;
}

/** A projection's state after the records of the segments named, through `through`. */
export interface Resumed<S> {
  readonly state: S;
  readonly through: number;
  readonly segments: ReadonlyArray<SegmentDigest>;
}

/** One recovered record: its sequence and event. */
export interface Entry {
  readonly sequence: number;
  readonly event: Event.Event;
}

/**
 * The trivial projection: every record in order, never refusing. Useful for
 * tests and for tools that only need the log. Its state grows with the
 * history, so a budget on candidate payload bytes is the caller's guard.
 */
export const collect: Projection<Array<Entry>, never> = {
  start: () => [],
  apply: (state, sequence, event) => {
    state.push({ sequence, event });
    return Either.right(state);
  },
};

/** A projection that only counts records (for verification without keeping state). */
export const count: Projection<number, never> = {
  start: () => 0,
  apply: (state) => Either.right(state + 1),
};
