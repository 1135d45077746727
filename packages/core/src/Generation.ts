/**
 * Incremental fold of one generation: its canonical base (snapshot parts in
 * order, then results, then checkpoints) followed by its live tail, one
 * record at a time, as the engine reads them at open.
 *
 * The builder is mutable and private to its caller: `apply` writes plain
 * `Map`s with no index upkeep, which is what makes folding a long history
 * fast; `finish` builds the persistent `State` (with its indexes) once. The
 * first refusal poisons the builder: every later `apply` and `finish`
 * returns that same error, so no partial state can be published.
 *
 * @example
 * const builder = Generation.start(manifest.baseRecordCount);
 * for (const record of records) {
 *   const applied = Generation.apply(builder, record.sequence, record.event);
 *   if (Either.isLeft(applied)) return applied;
 * }
 * return Generation.finish(builder);
 */
import * as Either from "fp-ts/lib/Either.js";
import type { Event } from "./Event.js";
import { type HistoryError, type HistoryReason, historyError } from "./HistoryError.js";
import {
  applyBaseCheckpoint,
  applyBaseQueueState,
  applyDomain,
  applySnapshotJobs,
  applyTailRecord,
  type Refusal,
} from "./internal/Apply.js";
import * as Fields from "./internal/Fields.js";
import { BuilderStore } from "./internal/Store.js";
import type { Image } from "./Image.js";
import type { Left } from "./Terminal.js";
import * as Limits from "./Limits.js";
import type { State } from "./State.js";

type Phase = "parts" | "results" | "checkpoints" | "queues";

// One shared success value: `apply` runs once per record at open.
const applied: Either.Either<HistoryError, void> = Either.right(undefined);

/** An in-progress generation fold. Opaque: use `apply` and `finish`. */
export class Builder {
  readonly #store: BuilderStore;
  #baseRecordCount: number;
  #index = 0;
  #phase: Phase = "parts";
  #nextPart = 0;
  /** The tag of part 0: every later part must be of the same schema. */
  #partTag: "SnapshotPart" | "SnapshotPartV3" | undefined = undefined;
  #failure: HistoryError | undefined = undefined;

  /** Use `start`. */
  constructor(baseRecordCount: number, options: Options = {}) {
    this.#baseRecordCount = baseRecordCount;
    this.#store = new BuilderStore(options.lean === true, options.collectLeft === true);
  }

  /** @internal */
  takeLeft(): Left {
    return this.#store.takeLeft();
  }

  /** @internal */
  endBase(): void {
    this.#baseRecordCount = Math.min(this.#baseRecordCount, this.#index);
  }

  /** Records applied so far (base and tail). */
  get recordsApplied(): number {
    return this.#index;
  }

  /** @internal */
  apply(sequence: number | undefined, event: Event): Either.Either<HistoryError, void> {
    if (this.#failure !== undefined) return Either.left(this.#failure);
    const refusal =
      this.#index < this.#baseRecordCount
        ? this.#applyBase(event)
        : applyTailRecord(this.#store, event);
    if (refusal !== undefined) {
      this.#failure = historyError({
        index: this.#index,
        sequence,
        event,
        memberIndex: refusal.memberIndex,
        reason: refusal.reason,
      });
      return Either.left(this.#failure);
    }
    this.#index++;
    return applied;
  }

  /**
   * @internal Folds `image` as a base, then what a base does not carry;
   * the builder then stands after `recordsApplied` records of a generation
   * whose base is `baseRecordCount` long. The first refusal, or undefined.
   */
  resumeFrom(
    image: Image,
    recordsApplied: number,
    baseRecordCount: number,
  ): HistoryError | undefined {
    for (const event of image.base) {
      const applied = this.apply(undefined, event);
      if (applied._tag === "Left") return applied.left;
    }
    const refused = (reason: HistoryReason): HistoryError => {
      this.#failure = historyError({
        index: this.#index,
        sequence: undefined,
        event: null,
        memberIndex: null,
        reason,
      });
      return this.#failure;
    };
    // An image always starts with part 0 (`Image.of`), which sets `last_job_id`.
    if (this.#nextPart === 0) return refused({ _tag: "InvalidField", field: "image base" });
    const facts = this.#store.restoreFacts(image.facts);
    if (facts !== undefined) return refused(facts);
    for (const [queue, times] of image.starts) {
      const reason = this.#store.restoreStarts(queue, times);
      if (reason !== undefined) return refused(reason);
    }
    if (image.schema3) this.#store.schema3 = true;
    if (
      !Number.isSafeInteger(recordsApplied) ||
      !Number.isSafeInteger(baseRecordCount) ||
      baseRecordCount < 0 ||
      recordsApplied < baseRecordCount
    ) {
      return refused({ _tag: "InvalidField", field: "image records" });
    }
    this.#index = recordsApplied;
    this.#baseRecordCount = baseRecordCount;
    return undefined;
  }

  /** @internal */
  finish(): Either.Either<HistoryError, State> {
    if (this.#failure !== undefined) return Either.left(this.#failure);
    if (this.#index < this.#baseRecordCount) {
      return Either.left(
        historyError({
          index: this.#index,
          sequence: undefined,
          event: null,
          memberIndex: null,
          reason: { _tag: "BaseIncomplete", expected: this.#baseRecordCount, actual: this.#index },
        }),
      );
    }
    return Either.right(this.#store.toState());
  }

  #applyBase(event: Event): Refusal | undefined {
    const reason = this.#baseReason(event);
    return reason === undefined ? undefined : { reason, memberIndex: null };
  }

  #baseReason(event: Event): HistoryReason | undefined {
    switch (event._tag) {
      case "SnapshotPart":
      case "SnapshotPartV3": {
        if (this.#phase !== "parts") return { _tag: "SnapshotOutOfPlace" };
        // (7,1) parts or (7,3) parts, never both (EVENTS-V3.md).
        if (this.#partTag !== undefined && event._tag !== this.#partTag) {
          return { _tag: "BaseOutOfOrder", expected: this.#partTag, found: event._tag };
        }
        this.#partTag = event._tag;
        if (event.part !== this.#nextPart) {
          return { _tag: "PartOutOfOrder", expected: this.#nextPart, actual: event.part };
        }
        if (this.#nextPart === 0) {
          if (!Fields.isIntegerIn(event.lastJobId, 0, Limits.idMax)) {
            return { _tag: "InvalidField", field: "last_job_id" };
          }
          this.#store.lastJobId = event.lastJobId;
        } else if (event.lastJobId !== this.#store.lastJobId) {
          return {
            _tag: "LastJobIdConflict",
            expected: this.#store.lastJobId,
            actual: event.lastJobId,
          };
        }
        this.#nextPart++;
        if (event._tag === "SnapshotPartV3") this.#store.schema3 = true;
        return applySnapshotJobs(this.#store, event.jobs, this.#store.lastJobId);
      }
      case "ResultRecorded":
        if (this.#nextPart === 0) return this.#outOfOrder(event);
        if (this.#phase === "checkpoints" || this.#phase === "queues") {
          return this.#outOfOrder(event);
        }
        this.#phase = "results";
        return applyDomain(this.#store, event);
      case "ScheduleCheckpoint":
      case "ScheduleCheckpointV3":
        if (this.#nextPart === 0 || this.#phase === "queues") return this.#outOfOrder(event);
        this.#phase = "checkpoints";
        return applyBaseCheckpoint(this.#store, event);
      case "QueueStateSet":
        if (this.#nextPart === 0) return this.#outOfOrder(event);
        this.#phase = "queues";
        return applyBaseQueueState(this.#store, event);
      default:
        return this.#outOfOrder(event);
    }
  }

  #outOfOrder(event: Event): HistoryReason {
    const expected =
      this.#nextPart === 0
        ? "SnapshotPart"
        : this.#phase === "parts"
          ? this.#partTag === "SnapshotPartV3"
            ? "SnapshotPartV3, ResultRecorded or ScheduleCheckpoint"
            : "SnapshotPart, ResultRecorded or ScheduleCheckpoint"
          : this.#phase === "results"
            ? "ResultRecorded or ScheduleCheckpoint"
            : this.#phase === "checkpoints"
              ? "ScheduleCheckpoint or QueueStateSet"
              : "QueueStateSet";
    return { _tag: "BaseOutOfOrder", expected, found: event._tag };
  }
}

/** How a generation is folded. */
export interface Options {
  /**
   * Fold into a lean state (`State.leanInitialState`): completed jobs
   * without a unique key are kept as their facts only (`Terminal.Fact`).
   * Every verdict is the full fold's. Default false.
   */
  readonly lean?: boolean;
  /**
   * With `lean`: keep the whole records of the jobs that leave memory until
   * `takeLeft` hands them over (what the shell writes its terminal index
   * from). A caller that sets it takes them regularly. Default false.
   */
  readonly collectLeft?: boolean;
}

/** What `takeLeft` hands over: whole records, and results of records handed over before. */
export type { Left } from "./Terminal.js";

/**
 * The whole records of the jobs that left memory since the last call (a
 * collecting lean fold only; empty otherwise), each with what happened to
 * it until the call, and the (10,2) events of jobs handed over before.
 */
export const takeLeft = (builder: Builder): Left => builder.takeLeft();

/**
 * Starts folding a generation whose canonical base is the first
 * `baseRecordCount` records (MANIFEST's base record count; 0 for none).
 */
export const start = (baseRecordCount: number, options: Options = {}): Builder =>
  new Builder(baseRecordCount, options);

/**
 * Starts folding a canonical base whose length is not known yet (a
 * compaction's base, folded as it is produced): every record applied is a
 * base record until `endBase`.
 */
export const startBase = (options: Options = {}): Builder =>
  new Builder(Number.MAX_SAFE_INTEGER, options);

/**
 * Ends the base of a builder from `startBase`: the records applied so far
 * are the whole base (`finish` no longer waits for more), later ones tail.
 */
export const endBase = (builder: Builder): void => builder.endBase();

/**
 * A builder that resumes a generation fold from an image of its state
 * (`Image.of`) instead of folding the generation's first `recordsApplied`
 * records again (docs/core.md, "Resuming a fold"): the records after
 * those apply as tail records, and `finish` gives what the full fold
 * gives. `Left` when the image is not one a fold makes (a base record
 * refused, a fact held whole or beyond `last_job_id`, starts of a queue
 * without a rate limit, fewer records than the base): the caller folds
 * the generation instead.
 */
export const resume = (
  image: Image,
  recordsApplied: number,
  baseRecordCount: number,
  options: Options = {},
): Either.Either<HistoryError, Builder> => {
  const builder = new Builder(Number.MAX_SAFE_INTEGER, options);
  const refused = builder.resumeFrom(image, recordsApplied, baseRecordCount);
  return refused === undefined ? Either.right(builder) : Either.left(refused);
};

/**
 * Applies the next record. `Left(HistoryError)` names the record's index,
 * the given `sequence` and the reason; the builder then stays failed.
 */
export const apply = (
  builder: Builder,
  sequence: number | undefined,
  event: Event,
): Either.Either<HistoryError, void> => builder.apply(sequence, event);

/**
 * The state of everything applied: `Left` with the first refusal, or with
 * `BaseIncomplete` when fewer records than the base were applied. The
 * builder stays usable; the state shares nothing mutable with it.
 */
export const finish = (builder: Builder): Either.Either<HistoryError, State> => builder.finish();
