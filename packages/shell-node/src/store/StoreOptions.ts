/**
 * The store's operational settings: how hard it syncs (`DurabilityPolicy`),
 * how long a batch may wait for company (`FlushPolicy`), when segments
 * rotate, and the recovery budgets. None of them is part of the format: a
 * store written under one set opens under any other.
 *
 * The vocabulary is the seed's (`segment-buffer`); docs/store.md gives the
 * precise reading for an append-only log.
 */
import * as Either from "effect/Either";
import type { OpenOptions } from "../disk/Disk.js";

/**
 * What an append waits for before it resolves:
 * - `Maximal`: its batch fdatasync'd; after a rotation the new segment and
 *   its directory entry fsynced before any record lands in it.
 * - `Segment`: written to the file (page cache); files are synced only when a
 *   segment is sealed and at close.
 * - `Throughput`: written to the file; nothing is ever synced by appends.
 * Init, activation and compaction sync every step under every policy.
 */
export type DurabilityPolicy = "Maximal" | "Segment" | "Throughput";

/** Every durability policy, for validation and CLI help. */
export const durabilityPolicies: ReadonlyArray<DurabilityPolicy> = [
  "Maximal",
  "Segment",
  "Throughput",
];

/**
 * When the writer flushes what is pending:
 * - `Immediate` (default): whenever it is idle; appends that arrive during a
 *   write+sync form the next batch (natural group commit);
 * - `Batch`: once `batchRecords` records are pending;
 * - `Interval`: once `intervalMs` have passed since the last flush;
 * - `BatchOrInterval`: whichever comes first;
 * - `BatchOrIntervalMin`: as `BatchOrInterval`, but the interval fires only
 *   with at least `batchRecordsMin` pending, and `intervalMsMax` flushes
 *   unconditionally;
 * - `Manual`: only `flush()` (and close, rotation of a full batch) flushes.
 * An append resolves only after its batch is flushed: under `Batch` and
 * `Manual` an append may wait indefinitely for company or a `flush()`.
 */
export type FlushPolicy =
  | { readonly _tag: "Immediate" }
  | { readonly _tag: "Batch"; readonly batchRecords: number }
  | { readonly _tag: "Interval"; readonly intervalMs: number }
  | { readonly _tag: "BatchOrInterval"; readonly batchRecords: number; readonly intervalMs: number }
  | {
      readonly _tag: "BatchOrIntervalMin";
      readonly batchRecords: number;
      readonly batchRecordsMin: number;
      readonly intervalMs: number;
      readonly intervalMsMax: number;
    }
  | { readonly _tag: "Manual" };

/** Flush whenever the writer is idle (natural group commit). */
export const Immediate: FlushPolicy = { _tag: "Immediate" };
/** Flush once `batchRecords` records are pending. */
export const Batch = (batchRecords: number): FlushPolicy => ({ _tag: "Batch", batchRecords });
/** Flush once `intervalMs` have passed since the last flush. */
export const Interval = (intervalMs: number): FlushPolicy => ({ _tag: "Interval", intervalMs });
/** Flush on whichever of `Batch` and `Interval` fires first. */
export const BatchOrInterval = (batchRecords: number, intervalMs: number): FlushPolicy => ({
  _tag: "BatchOrInterval",
  batchRecords,
  intervalMs,
});
/** `BatchOrInterval` whose interval needs `batchRecordsMin` pending; `intervalMsMax` always fires. */
export const BatchOrIntervalMin = (fields: {
  readonly batchRecords: number;
  readonly batchRecordsMin: number;
  readonly intervalMs: number;
  readonly intervalMsMax: number;
}): FlushPolicy => ({ _tag: "BatchOrIntervalMin", ...fields });
/** Never flush on its own. */
export const Manual: FlushPolicy = { _tag: "Manual" };

/**
 * Recovery budgets (EVENTS.md "Resource budgets"): operational limits on one
 * open or inspection. Exceeding one is `BudgetExceeded`, never corruption; a
 * larger budget makes the same store open.
 */
export interface RecoveryBudgets {
  /** Bytes of segment files read and decoded. */
  readonly bytesDecoded: number;
  /** Payload bytes of the records fed to the candidate (the projection). */
  readonly candidatePayloadBytes: number;
  /** Entries listed in `epochs/` and the generation's `segments/`, together. */
  readonly directoryEntries: number;
  /** Records of the generation (base and tail). */
  readonly historyRecords: number;
}

/** The name `BudgetExceeded` reports. */
export type BudgetName = keyof RecoveryBudgets;

/** Generous defaults: they bound a runaway, not a healthy store. */
export const defaultBudgets: RecoveryBudgets = {
  bytesDecoded: 1024 ** 4,
  candidatePayloadBytes: 16 * 1024 ** 3,
  directoryEntries: 1_000_000,
  historyRecords: 1_000_000_000,
};

/** Resolved options (see `resolve`). */
export interface StoreOptions {
  readonly durability: DurabilityPolicy;
  readonly flush: FlushPolicy;
  /** A segment is sealed once it reaches this size (at most the 1 GiB format bound). */
  readonly rotationTargetBytes: number;
  /** The capacity `storePressure()` divides by. */
  readonly storeBytesMax: number;
  /** Bytes of records submitted but not yet written; beyond it `submit` fails with `PendingFull`. */
  readonly pendingBytesMax: number;
  /** Bytes one batch write may carry (a larger single record is written alone). */
  readonly writeBytesMax: number;
  readonly budgets: RecoveryBudgets;
}

/** 64 MiB, FORMAT.md's default rotation target. */
export const rotationTargetBytesDefault = 64 * 1024 * 1024;

/** Maximal durability, immediate flush (natural group commit), 64 MiB segments. */
export const defaults: StoreOptions = {
  durability: "Maximal",
  flush: Immediate,
  rotationTargetBytes: rotationTargetBytesDefault,
  storeBytesMax: 16 * 1024 ** 3,
  pendingBytesMax: 256 * 1024 * 1024,
  writeBytesMax: 8 * 1024 * 1024,
  budgets: defaultBudgets,
};

/** Options as a caller gives them: any subset, budgets too. */
export interface StoreOptionsInput {
  readonly durability?: DurabilityPolicy;
  readonly flush?: FlushPolicy;
  readonly rotationTargetBytes?: number;
  readonly storeBytesMax?: number;
  readonly pendingBytesMax?: number;
  readonly writeBytesMax?: number;
  readonly budgets?: Partial<RecoveryBudgets>;
}

/** An option out of its range: which one, and the value given. */
export interface OptionError {
  readonly _tag: "OptionError";
  readonly option: string;
  readonly value: string;
}

/**
 * Fills `input` with `defaults` and checks every value. `segmentFileBytesMax`
 * is the format's bound on a file (the rotation target may not exceed it).
 * Returns the first out-of-range option as an `OptionError`.
 */
export const resolve = (
  input: StoreOptionsInput,
  segmentFileBytesMax: number,
): Either.Either<StoreOptions, OptionError> => {
  const options: StoreOptions = {
    durability: input.durability ?? defaults.durability,
    flush: input.flush ?? defaults.flush,
    rotationTargetBytes: input.rotationTargetBytes ?? defaults.rotationTargetBytes,
    storeBytesMax: input.storeBytesMax ?? defaults.storeBytesMax,
    pendingBytesMax: input.pendingBytesMax ?? defaults.pendingBytesMax,
    writeBytesMax: input.writeBytesMax ?? defaults.writeBytesMax,
    budgets: { ...defaultBudgets, ...input.budgets },
  };
  const bad = (option: string, value: unknown): Either.Either<never, OptionError> =>
    Either.left({ _tag: "OptionError", option, value: String(value) });
  const positive = (value: number): boolean => Number.isSafeInteger(value) && value >= 1;
  if (!durabilityPolicies.includes(options.durability)) {
    return bad("durability", options.durability);
  }
  const flushProblem = checkFlush(options.flush, positive);
  if (flushProblem !== undefined)
    return bad(`flush.${flushProblem}`, JSON.stringify(options.flush));
  if (!positive(options.rotationTargetBytes) || options.rotationTargetBytes > segmentFileBytesMax) {
    return bad("rotationTargetBytes", options.rotationTargetBytes);
  }
  if (!positive(options.storeBytesMax)) return bad("storeBytesMax", options.storeBytesMax);
  if (!positive(options.pendingBytesMax)) return bad("pendingBytesMax", options.pendingBytesMax);
  if (!positive(options.writeBytesMax)) return bad("writeBytesMax", options.writeBytesMax);
  for (const [name, value] of Object.entries(options.budgets)) {
    if (typeof value !== "number" || !(value >= 0)) return bad(`budgets.${name}`, value);
  }
  return Either.right(options);
};

const checkFlush = (
  policy: FlushPolicy,
  positive: (value: number) => boolean,
): string | undefined => {
  switch (policy._tag) {
    case "Immediate":
    case "Manual":
      return undefined;
    case "Batch":
      return positive(policy.batchRecords) ? undefined : "batchRecords";
    case "Interval":
      return positive(policy.intervalMs) ? undefined : "intervalMs";
    case "BatchOrInterval":
      if (!positive(policy.batchRecords)) return "batchRecords";
      return positive(policy.intervalMs) ? undefined : "intervalMs";
    case "BatchOrIntervalMin":
      if (!positive(policy.batchRecords)) return "batchRecords";
      if (!positive(policy.batchRecordsMin)) return "batchRecordsMin";
      if (!positive(policy.intervalMs)) return "intervalMs";
      return positive(policy.intervalMsMax) && policy.intervalMsMax >= policy.intervalMs
        ? undefined
        : "intervalMsMax";
    default: {
      const unknownPolicy: never = policy;
      return String(unknownPolicy);
    }
  }
};

/**
 * How the active segment is opened for appends: with `O_DSYNC` under
 * `Maximal` (each batch is durable when written), with small writes made
 * on the caller's thread under `Throughput` (nothing waits for the device,
 * and a page-cache write costs less than the hop to the thread pool; see
 * `Disk.OpenOptions.inlineWrites`). `Maximal`'s and `Segment`'s small
 * writes go on the caller's thread too, but by the writer's choice, held
 * off while the disk is slow (`internal/inlineWrite.ts`).
 */
export const appendOptions = (durability: DurabilityPolicy): OpenOptions => ({
  dataSync: durability === "Maximal",
  inlineWrites: durability === "Throughput",
});
