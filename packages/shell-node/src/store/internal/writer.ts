/**
 * The single writer: group commit, durability per policy, rotation.
 *
 * Submitters only encode, assign sequences and queue records (the last two
 * synchronously, so sequences follow submit order). One flusher fiber takes
 * everything pending when the flush policy says so — with the default
 * policy, whenever it is idle, so what arrives during a write+sync forms the
 * next batch — lays the batch into one buffer, writes it with one call
 * (looping over short writes), syncs as the durability policy asks, then
 * settles the batch's tickets. A failed write or sync puts the active
 * segment back to the end of the last acknowledged batch (`rollback.ts`),
 * then fails every outstanding submission and the writer for good: after an
 * fsync error the page cache cannot be trusted, and nothing is retried.
 *
 * The hot path allocates little and runs few Effect steps: a ticket is a
 * list of plain callbacks (no Deferred, no fiber per submission), the
 * flusher is woken by a callback rather than a queue, and a batch runs
 * write, sync and settlement as one chain. A caller that decides in batches
 * (the engine, through the file log) uses the synchronous pieces directly:
 * `admission`, `overBudget`, `enqueue`, and the ticket's `onSettled`.
 */
import type { Event } from "@tay/core";
import * as Cause from "effect/Cause";
import * as Clock from "effect/Clock";
import type * as Context from "effect/Context";
import * as Deferred from "effect/Deferred";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import * as Exit from "effect/Exit";
import * as Fiber from "effect/Fiber";
import { type Disk, DiskError } from "../../disk/Disk.js";
import { stalledWrite, writeAll } from "../../disk/Files.js";
import * as Batch from "../../log/Batch.js";
import type { PendingRecord } from "../../log/Batch.js";
import * as Ticket from "../../log/Ticket.js";
import * as Layout from "../Layout.js";
import { PendingFull, StoreClosed, type StoreError, WriterFailed } from "../StoreError.js";
import { appendOptions } from "../StoreOptions.js";
import {
  crc32c,
  encodeRecordInto,
  encodeSegmentFooter,
  encodeSegmentHeader,
  segmentFileBytesMax,
  segmentFooterBytes,
} from "./codec.js";
import { Exclusive } from "./exclusive.js";
import * as InlineWrite from "./inlineWrite.js";
import { rollBack } from "./rollback.js";
import { createSegment } from "./segmentCreate.js";
import { afterPoll } from "./afterPoll.js";
import { decide } from "./flushDecision.js";
import * as SegmentIndex from "./segmentIndex.js";
import {
  type ActiveSegment,
  lastAssigned,
  type SegmentState,
  type StoreState,
} from "./storeState.js";

/**
 * Wakes the flusher. It holds at most one wake-up, so wakes coalesce: a
 * wake while the flusher is busy makes its next wait return at once.
 */
export interface Wake {
  pending: boolean;
  /** Resumes the flusher while it waits. */
  resume: (() => void) | undefined;
}

/**
 * The direct path's phase: `Idle`, `Scheduled` (a microtask will write what
 * is pending) or `Writing` (a batch holds the writer's turn; what is
 * queued meanwhile is written when it ends).
 */
export type DirectPhase = "Idle" | "Scheduled" | "Writing";

/** The batch the direct path is writing: one at a time, since it holds the writer's turn. */
interface DirectWrite {
  records: ReadonlyArray<PendingRecord>;
  buffer: Uint8Array;
  active: ActiveSegment | undefined;
  /** Bytes of `buffer` written so far (a short write continues from here). */
  written: number;
}

/** The writer's machinery around the shared state. */
export interface Writer {
  readonly state: StoreState;
  readonly wake: Wake;
  /** One holder at a time: a batch, a rotation, a compaction, a close. */
  readonly exclusive: Exclusive;
  /** Whether the direct path writes batches (flush policy `Immediate`), or only the flusher fiber. */
  readonly direct: boolean;
  phase: DirectPhase;
  readonly current: DirectWrite;
  /** The store's `Disk`, for the direct path's rare steps (`runRare`). */
  readonly context: Context.Context<Disk>;
  /** The store's clock, read synchronously by the direct path. */
  readonly now: () => number;
  /**
   * Where batches are laid out: reused (a batch is done with its buffer
   * once its write returned), so a small batch allocates no buffer.
   * Grows up to `scratchBytesMax`; a larger batch gets its own.
   */
  scratch: Uint8Array;
  /** The last view of `scratch` a batch was laid out in (`scratchOf`). */
  scratchView: Uint8Array;
  /** The durable writes made on the caller's thread (`inlineWrite.ts`), and when the next may be. */
  readonly inline: InlineWrite.InlineRecord;
  // Bound once: the direct path schedules and answers without a closure per batch.
  readonly writeDirect: () => void;
  readonly onWritten: (error: DiskError | undefined, count: number) => void;
  /** `writeRest` deferred to the loop's next check phase (its turn's writes were spent). */
  readonly writeRest: () => void;
  /** Marks the loop's turn over: the next write on the caller's thread starts another (`InlineWrite.turnPlan`). */
  readonly endTurn: () => void;
}

const resolved = Promise.resolve();

/** The largest batch laid out in the writer's reused buffer. */
export const scratchBytesMax = 1024 * 1024;

/** A writer over `state`, idle, with the store's `Disk` and clock. */
export const make = (
  state: StoreState,
  context: Context.Context<Disk>,
  now: () => number,
): Writer => {
  const writer: Writer = {
    state,
    wake: makeWake(),
    exclusive: new Exclusive(),
    direct: state.options.flush._tag === "Immediate",
    phase: "Idle",
    current: { records: noRecords, buffer: noBytes, active: undefined, written: 0 },
    context,
    now,
    scratch: new Uint8Array(4096),
    scratchView: new Uint8Array(0),
    inline: InlineWrite.makeRecord(),
    writeDirect: () => writeDirect(writer),
    writeRest: () => {
      try {
        writeRest(writer);
      } catch (defect) {
        stopOnDefect(writer, defect);
      }
    },
    endTurn: () => InlineWrite.endTurn(writer.inline),
    onWritten: (error, count) => {
      try {
        onDirectWritten(writer, error, count);
      } catch (defect) {
        stopOnDefect(writer, defect);
      }
    },
  };
  return writer;
};

/** A wake with nothing held and nobody waiting. */
export const makeWake = (): Wake => ({ pending: false, resume: undefined });

/** Wakes the flusher now, or holds the wake-up for its next wait. */
export const wakeUp = (wake: Wake): void => {
  const resume = wake.resume;
  if (resume === undefined) {
    wake.pending = true;
    return;
  }
  wake.resume = undefined;
  resume();
};

/** Waits for a wake-up (returns at once when one is held). Interruptible. */
const waitForWake = (wake: Wake): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (wake.pending) {
      wake.pending = false;
      return Effect.void;
    }
    return Effect.async<void>((resume) => {
      wake.resume = () => resume(Effect.void);
      return Effect.sync(() => {
        wake.resume = undefined;
      });
    });
  });

/** What `submit` hands back: the batch's sequences and how to await its durability. */
export interface Submitted {
  readonly firstSequence: number;
  readonly lastSequence: number;
  /** Resolves once the batch is written and synced as the durability policy asks. */
  readonly durable: Effect.Effect<void, StoreError>;
}

/** Fails every outstanding submission with `failure` and stops the writer for good. */
export const failAll = (state: StoreState, failure: WriterFailed): void => {
  if (state.failure === undefined) state.failure = failure;
  const tickets = state.tickets;
  state.tickets = [];
  // What was never written never will be: reads stop showing it.
  state.pending = [];
  state.pendingBytes = 0;
  state.inFlight = noRecords;
  for (const ticket of tickets) Ticket.settle(ticket, failure);
};

/** Whether the writer takes a submission now. */
export type Admission =
  | { readonly _tag: "Open" }
  | { readonly _tag: "Gated"; readonly gate: Deferred.Deferred<void> }
  | { readonly _tag: "Refused"; readonly error: StoreError };

const open: Admission = { _tag: "Open" };

/**
 * `Open`; `Refused` once the writer failed (its failure) or is closing
 * (`StoreClosed`); `Gated` while a compaction holds the gate (wait on it,
 * then ask again).
 */
export const admission = (state: StoreState): Admission => {
  if (state.failure !== undefined) return { _tag: "Refused", error: state.failure };
  if (state.closing) return { _tag: "Refused", error: new StoreClosed({ path: state.directory }) };
  if (state.gate !== undefined) return { _tag: "Gated", gate: state.gate };
  return open;
};

/**
 * `PendingFull` if `bytes` more, on top of what is pending and of
 * `queuedBytes` the caller is about to queue with them, would pass
 * `pendingBytesMax` (a submission larger than the limit still passes alone).
 */
export const overBudget = (
  state: StoreState,
  queuedBytes: number,
  bytes: number,
): PendingFull | undefined => {
  const pendingBytes = state.pendingBytes + queuedBytes;
  const limit = state.options.pendingBytesMax;
  return pendingBytes + bytes > limit && pendingBytes > 0
    ? new PendingFull({ path: state.directory, pendingBytes, limit })
    : undefined;
};

/**
 * Assigns the next sequences to `records` in order, queues them and wakes
 * the flusher; returns their ticket. Synchronous: the caller checked
 * `admission` and `overBudget` in the same step. `records` is not empty.
 */
export const enqueue = (
  writer: Writer,
  records: ReadonlyArray<PendingRecord>,
  bytes: number,
): Ticket.Ticket<StoreError> => {
  const { state } = writer;
  let sequence = state.nextSequence;
  for (const record of records) {
    record.sequence = sequence;
    sequence += 1;
  }
  // Onto an empty queue (the common case: one drain per batch) as a copy of
  // exactly its length: an empty array's first push reserves 17 places
  // (~180 bytes a batch, docs/store.md, 2026-12-04).
  const pending = state.pending;
  if (pending.length === 0) state.pending = records.slice();
  else for (const record of records) pending.push(record);
  state.pendingBytes += bytes;
  state.nextSequence = sequence;
  const ticket = Ticket.make<StoreError>(sequence - 1);
  state.tickets.push(ticket);
  signal(writer);
  return ticket;
};

/** Queues prepared records unless refused: the submission, the error, or the gate to wait on. */
const assign = (writer: Writer, prepared: Batch.Batch): Submitted | Admission => {
  const { state } = writer;
  const admitted = admission(state);
  if (admitted._tag !== "Open") return admitted;
  const firstSequence = state.nextSequence;
  if (prepared.records.length === 0) {
    return { firstSequence, lastSequence: firstSequence - 1, durable: Effect.void };
  }
  const full = overBudget(state, 0, prepared.bytes);
  if (full !== undefined) return { _tag: "Refused", error: full };
  const ticket = enqueue(writer, prepared.records, prepared.bytes);
  return { firstSequence, lastSequence: ticket.lastSequence, durable: Ticket.wait(ticket) };
};

const assignOrWait = (
  writer: Writer,
  prepared: Batch.Batch,
): Effect.Effect<Submitted, StoreError> =>
  Effect.suspend(() => {
    const outcome = assign(writer, prepared);
    if (!("_tag" in outcome)) return Effect.succeed(outcome);
    switch (outcome._tag) {
      case "Refused":
        return Effect.fail(outcome.error);
      case "Gated":
        return Effect.zipRight(Deferred.await(outcome.gate), assignOrWait(writer, prepared));
      case "Open":
        return Effect.dieMessage("assign returned Open");
      default: {
        const unknownOutcome: never = outcome;
        return unknownOutcome;
      }
    }
  });

/**
 * Assigns the next sequences to `events` (one record each) in submit order
 * and queues them; waits only while a compaction holds the gate. Fails with
 * `UnencodableEvent` before assigning anything, `PendingFull`,
 * `WriterFailed` or `StoreClosed`.
 */
export const submit = (
  writer: Writer,
  events: ReadonlyArray<Event.Event>,
): Effect.Effect<Submitted, StoreError> =>
  Effect.suspend(() => {
    const prepared = Batch.prepare(events);
    return Either.isLeft(prepared)
      ? Effect.fail(prepared.left)
      : assignOrWait(writer, prepared.right);
  });

const noRecords: ReadonlyArray<PendingRecord> = [];

/**
 * How many pending records the next write takes (0: the active segment is
 * full: seal first). A batch ends only where a submission ends: at
 * `writeBytesMax` or at the rotation target it runs on to the end of the
 * submission it is in, so every record written before a failed batch
 * belongs to a resolved submission and taking the active segment back to
 * the end of the last batch removes exactly the rejected ones. Only the
 * format's 1 GiB bound cuts a submission, one that does not fit in a whole
 * segment (never with the default `pendingBytesMax`); one that does not
 * fit in the rest of this segment starts the next.
 */
const batchLength = (state: StoreState): { readonly count: number; readonly bytes: number } => {
  const { segment } = state.generation.active;
  const { tickets } = state;
  let ticket = 0;
  let bytes = 0;
  let count = 0;
  // The batch so far up to the end of the last whole submission in it.
  let wholeCount = 0;
  let wholeBytes = 0;
  for (const record of state.pending) {
    const atSubmissionEnd = count === wholeCount;
    if (count > 0 && atSubmissionEnd && bytes + record.size > state.options.writeBytesMax) break;
    // Stop at the rotation target: the next submission goes to the next segment.
    if (count > 0 && atSubmissionEnd && segment.size + bytes >= state.options.rotationTargetBytes) {
      break;
    }
    // The footer must still fit under the format's 1 GiB bound.
    if (segment.size + bytes + record.size + segmentFooterBytes > segmentFileBytesMax) {
      if (wholeCount > 0) return { count: wholeCount, bytes: wholeBytes };
      // A submission larger than what is left: start it in the next segment,
      // or, if it is larger than a whole segment, cut it here.
      return segment.recordCount > 0 ? { count: 0, bytes: 0 } : { count, bytes };
    }
    bytes += record.size;
    count += 1;
    while ((tickets[ticket]?.lastSequence ?? Number.POSITIVE_INFINITY) < record.sequence) {
      ticket += 1;
    }
    if (tickets[ticket]?.lastSequence === record.sequence) {
      wholeCount = count;
      wholeBytes = bytes;
      ticket += 1;
    }
  }
  return { count, bytes };
};

/** Takes the first `count` pending records (`bytes` in all) for a write. */
const takePending = (
  state: StoreState,
  count: number,
  bytes: number,
): ReadonlyArray<PendingRecord> => {
  state.pendingBytes -= bytes;
  if (count === state.pending.length) {
    // The common case: the whole queue, without copying it.
    const records = state.pending;
    state.pending = [];
    return records;
  }
  return state.pending.splice(0, count);
};

/**
 * Lays `records` back to back into `bytes` bytes of the writer's reused
 * buffer (grown as needed up to `scratchBytesMax`), or of a new one for a
 * larger batch. Every byte is written (header, payload, CRC), so nothing
 * of an earlier batch remains in the view.
 */
const layOut = (
  writer: Writer,
  records: ReadonlyArray<PendingRecord>,
  bytes: number,
): Uint8Array => {
  const buffer = bytes > scratchBytesMax ? new Uint8Array(bytes) : scratchOf(writer, bytes);
  let offset = 0;
  for (const record of records) {
    offset += encodeRecordInto(buffer, offset, record);
  }
  return buffer;
};

const scratchOf = (writer: Writer, bytes: number): Uint8Array => {
  if (writer.scratch.length < bytes) {
    let length = writer.scratch.length * 2;
    while (length < bytes) length *= 2;
    writer.scratch = new Uint8Array(Math.min(length, scratchBytesMax));
  }
  // The last batch's view when this batch has its length, as one
  // producer's batches mostly do: a view is ~100 bytes a batch. It is the
  // same memory either way (a batch is done with it once its write
  // returned), and always a view of the current buffer: one grows only for
  // a batch longer than the old buffer, so longer than any view of it.
  const view = writer.scratchView;
  if (view.length === bytes) return view;
  const fresh = writer.scratch.subarray(0, bytes);
  writer.scratchView = fresh;
  return fresh;
};

const noBytes = new Uint8Array(0);

/** Settles, in order, every submission whose last record is at or below `sequence`. */
const resolveThrough = (state: StoreState, sequence: number): void => {
  const { tickets } = state;
  let resolved = 0;
  while (resolved < tickets.length && (tickets[resolved]?.lastSequence ?? 0) <= sequence) {
    resolved += 1;
  }
  if (resolved === 0) return;
  // One ticket (one awaited producer): off the list without a new one,
  // and by `pop`, which keeps the list's room for the next one (`length =
  // 0` gives it back, and the next push allocates it again).
  if (tickets.length === 1) {
    const only = tickets.pop();
    if (only !== undefined) Ticket.settle(only, undefined);
    return;
  }
  // Off the list first: a waiter may submit again.
  const done = resolved === tickets.length ? tickets : tickets.slice(0, resolved);
  state.tickets = resolved === tickets.length ? [] : tickets.slice(resolved);
  for (const ticket of done) Ticket.settle(ticket, undefined);
};

const failWith = (writer: Writer, cause: DiskError) =>
  Effect.sync(() => failAll(writer.state, new WriterFailed({ cause })));

/**
 * After a failed write or sync of the active segment: puts it back to the
 * end of the last acknowledged batch (`rollBack`), then fails the writer
 * with `cause` and the rollback's outcome, so that a rejected append's
 * bytes are gone by the time its rejection is seen.
 */
const failAfterRollback = (writer: Writer, active: ActiveSegment, cause: DiskError) =>
  Effect.flatMap(rollBack(active.handle, active.segment.size), (rollback) =>
    Effect.sync(() => failAll(writer.state, new WriterFailed({ cause, rollback }))),
  );

/**
 * Seals the active segment (footer, synced unless `Throughput`) and starts
 * the next one (staged under `SEGMENT.tmp` and hard-linked into place, see
 * `createSegment`; file and directory synced unless `Throughput`).
 * Runs holding the writer's turn (`exclusive`). Returns the failure that stopped it, if any;
 * the caller fails the writer with it. A failed footer write or sync is
 * taken back first (the segment ends at its last record again).
 */
const sealAndStartNext = (writer: Writer): Effect.Effect<WriterFailed | undefined, never, Disk> =>
  Effect.gen(function* () {
    const { state } = writer;
    const generation = state.generation;
    const active = generation.active;
    const segment = active.segment;
    const syncing = state.options.durability !== "Throughput";
    const footer = encodeSegmentFooter({
      segmentId: segment.id,
      firstSequence: segment.firstSequence,
      storeId: generation.storeId,
      lastSequence: segment.firstSequence + segment.recordCount - 1,
      recordCount: segment.recordCount,
      segmentCrc: active.crc,
    });
    const sealed = yield* Effect.either(
      Effect.gen(function* () {
        yield* writeAll(active.handle, segment.size, footer);
        if (syncing) yield* active.handle.sync();
      }),
    );
    if (Either.isLeft(sealed)) {
      const rollback = yield* rollBack(active.handle, segment.size);
      return new WriterFailed({ cause: sealed.left, rollback });
    }
    segment.size += footer.length;
    segment.sealed = true;
    segment.crc = active.crc;
    yield* Effect.ignore(active.handle.close());

    const id = segment.id + 1;
    const firstSequence = segment.firstSequence + segment.recordCount;
    const header = encodeSegmentHeader({
      segmentId: id,
      firstSequence,
      storeId: generation.storeId,
    });
    const path = Layout.segmentPath(state.directory, generation.epoch, id);
    const created = yield* Effect.either(
      createSegment({
        directory: state.directory,
        epoch: generation.epoch,
        id,
        header,
        sync: syncing,
        append: appendOptions(state.options.durability),
        operation: "rotation",
      }),
    );
    if (Either.isLeft(created)) return new WriterFailed({ cause: created.left });
    const next: SegmentState = {
      id,
      path,
      firstSequence,
      recordCount: 0,
      size: header.length,
      sealed: false,
      crc: 0,
      index: SegmentIndex.empty(),
    };
    generation.segments.push(next);
    generation.active = { segment: next, handle: created.right, crc: crc32c(header) };
    return undefined;
  });

/** Rotates now; a failure stops the writer. */
export const rotate = (writer: Writer): Effect.Effect<void, never, Disk> =>
  Effect.flatMap(sealAndStartNext(writer), (failure) =>
    Effect.sync(() => {
      if (failure !== undefined) failAll(writer.state, failure);
    }),
  );

/**
 * Accounts for a batch once its write (and sync) succeeded: index, size,
 * running CRC; rotates when the segment reached its target; then settles
 * the batch's submissions.
 */
const written = (
  writer: Writer,
  active: ActiveSegment,
  records: ReadonlyArray<PendingRecord>,
  buffer: Uint8Array,
): Effect.Effect<void, never, Disk> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const { state } = writer;
    const lastWritten = account(state, active, records, buffer, now);
    if (lastWritten !== undefined) {
      resolveThrough(state, lastWritten);
      return Effect.void;
    }
    return rotateThenResolve(writer);
  });

/**
 * Notes a written batch in the segment (index, size, running CRC) at
 * `now`. Returns the last sequence written, to resolve through, or
 * undefined when the segment reached its target and must rotate first.
 */
const account = (
  state: StoreState,
  active: ActiveSegment,
  records: ReadonlyArray<PendingRecord>,
  buffer: Uint8Array,
  now: number,
): number | undefined => {
  const segment = active.segment;
  let offset = segment.size;
  for (const record of records) {
    SegmentIndex.note(segment.index, segment.recordCount, record.sequence, offset);
    segment.recordCount += 1;
    offset += record.size;
  }
  segment.size = offset;
  active.crc = crc32c(buffer, active.crc);
  state.marks.note(state.generation.epoch, segment, active.crc);
  state.inFlight = noRecords;
  state.lastFlushAt = now;
  if (state.pending.length === 0) state.forced = false;
  return segment.size < state.options.rotationTargetBytes
    ? segment.firstSequence + segment.recordCount - 1
    : undefined;
};

/**
 * Rotation before resolving: once an append resolves, no write of its
 * batch (nor the rotation it caused) is still in flight.
 */
const rotateThenResolve = (writer: Writer): Effect.Effect<void, never, Disk> => {
  const { state } = writer;
  const { segment } = state.generation.active;
  const lastWritten = segment.firstSequence + segment.recordCount - 1;
  return Effect.flatMap(sealAndStartNext(writer), (rotationFailure) =>
    Effect.sync(() => {
      resolveThrough(state, lastWritten);
      if (rotationFailure !== undefined) failAll(state, rotationFailure);
    }),
  );
};

/**
 * Writes one batch of what is pending (and rotates when the segment is
 * full or passed its target). Runs holding the writer's turn; never fails: a disk
 * error takes the batch's bytes back (`failAfterRollback`), is recorded in
 * the state and fails the outstanding submissions.
 */
export const writeBatch = (writer: Writer): Effect.Effect<void, never, Disk> =>
  Effect.suspend(() => {
    const { state } = writer;
    if (state.failure !== undefined || state.pending.length === 0) return Effect.void;
    const { count, bytes } = batchLength(state);
    if (count === 0) {
      // The next record would push the file past 1 GiB: seal first.
      return rotate(writer);
    }
    const records = takePending(state, count, bytes);
    state.inFlight = records;
    const active = state.generation.active;
    const buffer = layOut(writer, records, bytes);
    const write = writeAll(active.handle, active.segment.size, buffer);
    return Effect.matchEffect(
      // A handle opened with O_DSYNC (Maximal) is durable when the write returns.
      state.options.durability === "Maximal" && !active.handle.dataSync
        ? Effect.zipRight(write, active.handle.sync())
        : write,
      {
        onFailure: (error) => failAfterRollback(writer, active, error),
        onSuccess: () => written(writer, active, records, buffer),
      },
    );
  });

/**
 * Tells the writer that records are pending. Under `Immediate` the direct
 * path writes them from a microtask (records queued in the same turn join
 * one batch, and a batch in flight takes what arrives meanwhile as the
 * next); under the other policies the flusher fiber decides.
 */
const signal = (writer: Writer): void => {
  if (!writer.direct) {
    wakeUp(writer.wake);
    return;
  }
  if (writer.phase !== "Idle") return;
  writer.phase = "Scheduled";
  // A resolved promise's reaction: `queueMicrotask` makes an AsyncResource per call.
  resolved.then(writer.writeDirect);
};

/**
 * The direct path: writes what is pending holding the writer's turn, with
 * no fiber (a fiber's resume and steps cost more than the write of a small
 * batch, docs/benchmarks.md "One awaited insert"). When another holds the
 * turn (a compaction, a close, the flusher serving `flush()`), it wakes
 * the flusher instead, which waits for the turn as before. The steps and
 * their order are `writeBatch`'s.
 */
const writeDirect = (writer: Writer): void => {
  const { state } = writer;
  if (state.failure !== undefined || state.pending.length === 0) {
    writer.phase = "Idle";
    return;
  }
  if (!writer.exclusive.tryTake()) {
    writer.phase = "Idle";
    wakeUp(writer.wake);
    return;
  }
  writer.phase = "Writing";
  try {
    directBatch(writer);
  } catch (defect) {
    stopOnDefect(writer, defect);
  }
};

/** Ends a direct batch: the turn is handed over, and what arrived meanwhile is written next. */
const directDone = (writer: Writer): void => {
  writer.exclusive.handOver();
  writer.phase = "Idle";
  if (writer.state.pending.length > 0 && writer.state.failure === undefined) signal(writer);
};

/** One batch of the direct path, holding the writer's turn (`writeBatch` without a fiber). */
const directBatch = (writer: Writer): void => {
  const { state } = writer;
  const { count, bytes } = batchLength(state);
  if (count === 0) {
    // The next record would push the file past 1 GiB: seal first.
    runRare(writer, rotate(writer), () => directDone(writer));
    return;
  }
  const records = takePending(state, count, bytes);
  state.inFlight = records;
  const active = state.generation.active;
  const { current } = writer;
  current.records = records;
  current.buffer = layOut(writer, records, bytes);
  current.active = active;
  current.written = 0;
  writeRest(writer);
};

/**
 * Writes what is left of the current batch: on the caller's thread when
 * `inlineWrite.ts` allows it (a small batch the policy waits for, under
 * `Maximal` or `Segment`, with nothing behind it),
 * else through the handle's `write.now` (answered by `onWritten`, perhaps
 * before it returns), or its `write` run by `runRare` for a handle
 * without one. Every way answers through `onWritten` only once the write
 * has returned. A write made on the caller's thread, this path's or
 * `Throughput`'s handle's own, takes its turn of the loop first
 * (`InlineWrite.turnPlan`): at once, or at the loop's next turn.
 */
const writeRest = (writer: Writer): void => {
  const { buffer, active, written } = writer.current;
  if (active === undefined) return;
  const { handle } = active;
  const rest = written === 0 ? buffer : buffer.subarray(written);
  const position = active.segment.size + written;
  const { durability } = writer.state.options;
  const { now } = handle.write;
  // This path's own inline write, when the batch may be written so.
  const inline =
    handle.write.inline !== undefined && mayInline(writer, handle.dataSync, rest.length)
      ? handle.write.inline
      : undefined;
  const started =
    inline !== undefined || (now !== undefined && InlineWrite.handleWritesInline(durability))
      ? performance.now()
      : undefined;
  if (started !== undefined) {
    const turn = InlineWrite.turnPlan(writer.inline, started, InlineWrite.chains(durability));
    if (turn === "NextTurn") {
      // The loop turns first (timers, I/O), then this batch is written inline or not.
      afterPoll(writer.writeRest);
      return;
    }
    if (turn === "Starts") afterPoll(writer.endTurn);
  }
  if (inline !== undefined && started !== undefined) {
    const outcome = inline(position, rest);
    InlineWrite.note(writer.inline, started, performance.now());
    if (Either.isRight(outcome)) writer.onWritten(undefined, outcome.right);
    else writer.onWritten(outcome.left, 0);
    return;
  }
  if (now !== undefined) {
    now(position, rest, writer.onWritten);
    return;
  }
  runRare(writer, Effect.either(handle.write(position, rest)), (outcome) =>
    Either.isRight(outcome)
      ? writer.onWritten(undefined, outcome.right)
      : writer.onWritten(outcome.left, 0),
  );
};

/** Whether this part of the current batch may be written inline by this path (`inlineWrite.ts`). */
const mayInline = (writer: Writer, dataSync: boolean, bytes: number): boolean => {
  // The clock is read only while the path is held off.
  const { inline } = writer;
  if (inline.held) InlineWrite.lift(inline, performance.now());
  return InlineWrite.mayInline(inline, {
    bytesMax: InlineWrite.bytesMaxFor(writer.state.options.durability, dataSync),
    bytes,
    pendingRecords: writer.state.pending.length,
  });
};

/** A write of the current batch returned: the next part, the failure, or the batch's end. */
const onDirectWritten = (writer: Writer, error: DiskError | undefined, count: number): void => {
  const { current } = writer;
  const { active } = current;
  if (active === undefined) return;
  const failure = error ?? (count > 0 ? undefined : stalledWrite(active.handle.path));
  if (failure !== undefined) {
    endDirectWrite(writer);
    runRare(writer, failAfterRollback(writer, active, failure), () => directDone(writer));
    return;
  }
  current.written += count;
  if (current.written < current.buffer.length) {
    writeRest(writer);
    return;
  }
  const { records, buffer } = current;
  endDirectWrite(writer);
  directWritten(writer, active, records, buffer);
};

// The current batch is over: nothing of it stays reachable from the writer.
const endDirectWrite = (writer: Writer): void => {
  const { current } = writer;
  current.records = noRecords;
  current.buffer = noBytes;
  current.active = undefined;
  current.written = 0;
};

/** The batch is written: sync it if the policy asks and the handle cannot, account, resolve. */
const directWritten = (
  writer: Writer,
  active: ActiveSegment,
  records: ReadonlyArray<PendingRecord>,
  buffer: Uint8Array,
): void => {
  const { state } = writer;
  if (state.options.durability === "Maximal" && !active.handle.dataSync) {
    // A disk without O_DSYNC: the sync after the write, as `writeBatch` does.
    runRare(
      writer,
      Effect.matchEffect(active.handle.sync(), {
        onFailure: (syncError) => failAfterRollback(writer, active, syncError),
        onSuccess: () => written(writer, active, records, buffer),
      }),
      () => directDone(writer),
    );
    return;
  }
  const lastWritten = account(state, active, records, buffer, writer.now());
  if (lastWritten === undefined) {
    runRare(writer, rotateThenResolve(writer), () => directDone(writer));
    return;
  }
  resolveThrough(state, lastWritten);
  directDone(writer);
};

/**
 * Runs one of the direct path's rare steps (a rotation, a rollback, a
 * write through a handle without `write.now`) to its end on its own fiber,
 * with the store's `Disk`, then `done` with its value. A defect is a bug:
 * the writer stops as after a disk error (every outstanding append fails)
 * and the turn is handed over.
 */
const runRare = <A>(
  writer: Writer,
  effect: Effect.Effect<A, never, Disk>,
  done: (value: A) => void,
): void => {
  Effect.runCallback(Effect.provide(effect, writer.context), {
    onExit: (exit) => {
      if (Exit.isSuccess(exit)) done(exit.value);
      else stopOnDefect(writer, Cause.squash(exit.cause));
    },
  });
};

/**
 * A step of the direct path threw or died: a bug. The writer stops as after
 * a disk error (every outstanding append fails with `WriterFailed`, the
 * defect named on its one line) and the turn is handed over, so nothing
 * waits for ever on a writer that will not write again.
 */
const stopOnDefect = (writer: Writer, defect: unknown): void => {
  const { state } = writer;
  const [reason = "defect"] = String(defect).split("\n");
  const cause = new DiskError({
    operation: "write",
    path: state.generation.active.segment.path,
    code: "Other",
    detail: `the writer's step died: ${reason}`,
  });
  failAll(state, new WriterFailed({ cause }));
  directDone(writer);
};

/**
 * The flusher fiber: waits as the flush policy says, writes batches, stops
 * when the writer failed or when close has drained everything.
 */
export const flusher = (writer: Writer): Effect.Effect<void, never, Disk> =>
  Effect.gen(function* () {
    const { state } = writer;
    // Built once: an Effect is a description, run again at every batch.
    const writeOne = writer.exclusive.holding(writeBatch(writer));
    const wait = waitForWake(writer.wake);
    for (;;) {
      if (state.failure !== undefined) return;
      if (state.closing && state.pending.length === 0) return;
      const now = yield* Clock.currentTimeMillis;
      const decision = decide(state.options.flush, {
        pendingRecords: state.pending.length,
        lastFlushAt: state.lastFlushAt,
        now,
        forced: state.forced || state.closing,
      });
      switch (decision._tag) {
        case "Now":
          yield* writeOne;
          break;
        case "At":
          yield* Effect.timeoutOption(wait, Duration.millis(Math.max(0, decision.at - now)));
          break;
        case "Wait":
          yield* wait;
          break;
        default: {
          const unknownDecision: never = decision;
          return unknownDecision;
        }
      }
    }
  });

/**
 * Forces everything submitted so far to be written (and synced per policy)
 * and waits for it. Fails with the writer's failure.
 */
export const flush = (writer: Writer): Effect.Effect<void, StoreError> =>
  Effect.suspend(() => {
    const { state } = writer;
    const last = state.tickets[state.tickets.length - 1];
    const failed = Effect.suspend(() =>
      state.failure === undefined ? Effect.void : Effect.fail(state.failure),
    );
    if (last === undefined) return failed;
    state.forced = true;
    wakeUp(writer.wake);
    return Effect.zipRight(Ticket.wait(last), failed);
  });

/**
 * Closes the writer: refuses new submissions, lets the flusher drain what is
 * pending, syncs the active segment (`Segment` policy; `Maximal` already did,
 * `Throughput` never does) and closes it. Idempotent.
 */
export const close = (
  writer: Writer,
  flusherFiber: Fiber.Fiber<void>,
): Effect.Effect<void, StoreError, Disk> =>
  Effect.gen(function* () {
    const { state } = writer;
    const first = yield* Effect.sync(() => {
      const wasClosing = state.closing;
      state.closing = true;
      wakeUp(writer.wake);
      return !wasClosing;
    });
    yield* Fiber.await(flusherFiber);
    if (first) {
      yield* writer.exclusive.holding(
        Effect.gen(function* () {
          const { handle } = state.generation.active;
          if (state.failure === undefined && state.options.durability === "Segment") {
            const synced = yield* Effect.either(handle.sync());
            if (Either.isLeft(synced)) yield* failWith(writer, synced.left);
          }
          yield* Effect.ignore(handle.close());
          yield* Effect.sync(() => {
            const tickets = state.tickets;
            state.tickets = [];
            const closed = new StoreClosed({ path: state.directory });
            for (const ticket of tickets) Ticket.settle(ticket, closed);
          });
        }),
      );
    }
    if (state.failure !== undefined) return yield* state.failure;
  });

/** The last sequence assigned so far. */
export const lastSequence = (writer: Writer): number => lastAssigned(writer.state);

/** Makes the active segment's data durable now, whatever the policy (after a flush). */
export const syncNow = (writer: Writer): Effect.Effect<void, StoreError, Disk> =>
  Effect.gen(function* () {
    yield* flush(writer);
    yield* writer.exclusive.holding(
      Effect.gen(function* () {
        const { state } = writer;
        if (state.failure !== undefined) return yield* state.failure;
        if (state.closing) return yield* new StoreClosed({ path: state.directory });
        const synced = yield* Effect.either(state.generation.active.handle.sync());
        if (Either.isLeft(synced)) {
          yield* failWith(writer, synced.left);
          return yield* Effect.fail(state.failure ?? new WriterFailed({ cause: synced.left }));
        }
      }),
    );
  });
