/**
 * The file store as the engine's log: `open` recovers the store in a
 * directory (lock, full validation, fold into the caller's projection,
 * activation of the single writer) and gives the `Log` the engine runs
 * over, with the store's read-only view. Nothing it returns appends
 * records other than the engine's decided batches.
 */
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import type { Disk } from "../disk/Disk.js";
import type * as Log from "../log/Log.js";
import type { Projection } from "../log/Projection.js";
import * as Store from "./Store.js";
import type { FileLogKind } from "./Store.js";
import type { HistoryRejected, RecoveryError } from "./StoreError.js";
import type { StoreOptionsInput } from "./StoreOptions.js";

export type { Digests, FileLogKind, StoreView } from "./Store.js";

/**
 * Opens the store in `directory` for the scope as a log, folding its
 * history into `projection`. Fails as `Store.open` does: with the first
 * fault found, naming its file, offset and sequence; nothing but LOCK is
 * written before the writer activates.
 */
export const open = <S, E>(
  directory: string,
  options: StoreOptionsInput,
  projection: Projection<S, E>,
): Effect.Effect<
  Log.Recovered<S, FileLogKind>,
  RecoveryError | HistoryRejected<E>,
  Disk | Scope.Scope
> =>
  // Only the log, its state and its report: the raw store stays behind.
  Effect.map(Store.open(directory, options, projection), ({ log, state, report }) => ({
    log,
    state,
    report,
  }));
