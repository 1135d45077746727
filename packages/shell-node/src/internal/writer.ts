/**
 * The single writer: group commit, durability per policy, rotation.
 *
 * Submitters only assign sequences and queue encoded records (synchronously,
 * so sequences follow submit order). One flusher fiber takes everything
 * pending when the flush policy says so — with the default policy, whenever
 * it is idle, so what arrives during a write+sync forms the next batch — lays
 * the batch into one buffer, writes it with one call (looping over short
 * writes), syncs as the durability policy asks, then resolves the batch's
 * submissions. A failed write or sync fails every outstanding submission and
 * the writer for good: after an fsync error the page cache cannot be trusted.
 */
import type { Event } from "@tay/core";
import { Clock, Deferred, Duration, Effect, Either, Fiber, Queue } from "effect";
import type { Disk, DiskError } from "../Disk.js";
import * as Layout from "../Layout.js";
import {
  PendingFull,
  StoreClosed,
  type StoreError,
  UnencodableEvent,
  WriterFailed,
} from "../StoreError.js";
import {
  crc32c,
  encodeEvent,
  encodeRecordInto,
  encodeSegmentFooter,
  encodeSegmentHeader,
  payloadBytesMax,
  recordSize,
  segmentFileBytesMax,
  segmentFooterBytes,
} from "./codec.js";
import { createFile, writeAll } from "./files.js";
import { decide } from "./flushDecision.js";
import * as SegmentIndex from "./segmentIndex.js";
import {
  lastAssigned,
  makeSignal,
  type PendingRecord,
  type SegmentState,
  type StoreState,
  settle,
} from "./storeState.js";

/** The writer's machinery around the shared state. */
export interface Writer {
  readonly state: StoreState;
  /** Wakes the flusher; holds at most one signal, so wakes coalesce. */
  readonly wake: Queue.Queue<void>;
  /** One holder at a time: a batch, a rotation, a compaction, a close. */
  readonly semaphore: Effect.Semaphore;
}

/** What `submit` hands back: the batch's sequences and how to await its durability. */
export interface Submitted {
  readonly firstSequence: number;
  readonly lastSequence: number;
  /** Resolves once the batch is written and synced as the durability policy asks. */
  readonly durable: Effect.Effect<void, StoreError>;
}

/** An event encoded for the log, its sequence still to come. */
export interface EncodedEvent {
  readonly event: Event.Event;
  readonly type: number;
  readonly schema: number;
  readonly payload: Uint8Array;
  readonly size: number;
}

/**
 * Encodes `events` (pure): their pairs, payloads and record sizes. Fails
 * with `UnencodableEvent` naming the first event the codec refuses.
 */
export const encodeEvents = (
  events: ReadonlyArray<Event.Event>,
): Either.Either<Array<EncodedEvent>, UnencodableEvent> => {
  const encoded: Array<EncodedEvent> = [];
  for (let index = 0; index < events.length; index++) {
    const event = events[index];
    if (event === undefined) continue;
    const result = encodeEvent(event);
    if (result._tag === "Left") {
      return Either.left(new UnencodableEvent({ index, reason: result.left }));
    }
    const { type, schema, payload } = result.right;
    if (payload.length > payloadBytesMax) {
      return Either.left(
        new UnencodableEvent({
          index,
          reason: { _tag: "PayloadTooLarge", bytes: payload.length, limit: payloadBytesMax },
        }),
      );
    }
    encoded.push({ event, type, schema, payload, size: recordSize(payload.length) });
  }
  return Either.right(encoded);
};

/** Fails every outstanding submission with `failure` and stops the writer for good. */
export const failAll = (state: StoreState, failure: WriterFailed): void => {
  if (state.failure === undefined) state.failure = failure;
  for (const ticket of state.tickets) settle(ticket.deferred, Effect.fail(failure));
  state.tickets = [];
  // What was never written never will be: reads stop showing it.
  state.pending = [];
  state.pendingBytes = 0;
  state.inFlight = [];
};

/** Why `assign` did not assign: the caller waits on the gate, or fails. */
type AssignOutcome =
  | { readonly _tag: "Assigned"; readonly submitted: Submitted }
  | { readonly _tag: "Gated"; readonly gate: Deferred.Deferred<void> }
  | { readonly _tag: "Refused"; readonly error: StoreError };

/** Assigns sequences to `encoded` and queues it, atomically. */
const assign = (writer: Writer, encoded: ReadonlyArray<EncodedEvent>): AssignOutcome => {
  const { state } = writer;
  if (state.failure !== undefined) return { _tag: "Refused", error: state.failure };
  if (state.closing) return { _tag: "Refused", error: new StoreClosed({ path: state.directory }) };
  if (state.gate !== undefined) return { _tag: "Gated", gate: state.gate };
  const firstSequence = state.nextSequence;
  if (encoded.length === 0) {
    return {
      _tag: "Assigned",
      submitted: { firstSequence, lastSequence: firstSequence - 1, durable: Effect.void },
    };
  }
  const bytes = encoded.reduce((sum, record) => sum + record.size, 0);
  if (state.pendingBytes + bytes > state.options.pendingBytesMax && state.pendingBytes > 0) {
    return {
      _tag: "Refused",
      error: new PendingFull({
        pendingBytes: state.pendingBytes,
        limit: state.options.pendingBytesMax,
      }),
    };
  }
  let sequence = firstSequence;
  for (const record of encoded) {
    state.pending.push({ ...record, sequence });
    sequence += 1;
  }
  state.pendingBytes += bytes;
  state.nextSequence = sequence;
  const lastSequence = sequence - 1;
  const deferred = makeSignal<StoreError>();
  state.tickets.push({ lastSequence, deferred });
  writer.wake.unsafeOffer(undefined);
  return {
    _tag: "Assigned",
    submitted: { firstSequence, lastSequence, durable: Deferred.await(deferred) },
  };
};

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
  Effect.gen(function* () {
    const encoded = encodeEvents(events);
    if (Either.isLeft(encoded)) return yield* encoded.left;
    for (;;) {
      const outcome = yield* Effect.sync(() => assign(writer, encoded.right));
      switch (outcome._tag) {
        case "Assigned":
          return outcome.submitted;
        case "Refused":
          return yield* Effect.fail(outcome.error);
        case "Gated":
          yield* Deferred.await(outcome.gate);
          break;
        default: {
          const unknownOutcome: never = outcome;
          return unknownOutcome;
        }
      }
    }
  });

/** How many pending records the next write takes (0: the active segment is full). */
const batchLength = (state: StoreState): { readonly count: number; readonly bytes: number } => {
  const { segment } = state.generation.active;
  let bytes = 0;
  let count = 0;
  for (const record of state.pending) {
    if (count > 0 && bytes + record.size > state.options.writeBytesMax) break;
    // Stop at the rotation target: the rest goes to the next segment.
    if (count > 0 && segment.size + bytes >= state.options.rotationTargetBytes) break;
    // The footer must still fit under the format's 1 GiB bound.
    if (segment.size + bytes + record.size + segmentFooterBytes > segmentFileBytesMax) break;
    bytes += record.size;
    count += 1;
  }
  return { count, bytes };
};

/** Lays `records` back to back into one buffer of `bytes` bytes. */
const layOut = (records: ReadonlyArray<PendingRecord>, bytes: number): Uint8Array => {
  const buffer = new Uint8Array(bytes);
  let offset = 0;
  for (const record of records) {
    offset += encodeRecordInto(buffer, offset, record);
  }
  return buffer;
};

/** Resolves, in order, every submission whose last record is at or below `sequence`. */
const resolveThrough = (state: StoreState, sequence: number): void => {
  let resolved = 0;
  for (const ticket of state.tickets) {
    if (ticket.lastSequence > sequence) break;
    settle(ticket.deferred, Effect.void);
    resolved += 1;
  }
  if (resolved > 0) state.tickets.splice(0, resolved);
};

const failWith = (writer: Writer, cause: DiskError) =>
  Effect.sync(() => failAll(writer.state, new WriterFailed({ cause })));

/**
 * Seals the active segment (footer, synced unless `Throughput`) and starts
 * the next one (header; file and directory synced unless `Throughput`).
 * Runs under the semaphore. Returns the disk error that stopped it, if any;
 * the caller fails the writer with it.
 */
const sealAndStartNext = (writer: Writer): Effect.Effect<DiskError | undefined, never, Disk> =>
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
    if (Either.isLeft(sealed)) return sealed.left;
    segment.size += footer.length;
    segment.sealed = true;
    yield* Effect.ignore(active.handle.close());

    const id = segment.id + 1;
    const firstSequence = segment.firstSequence + segment.recordCount;
    const header = encodeSegmentHeader({
      segmentId: id,
      firstSequence,
      storeId: generation.storeId,
    });
    const path = Layout.segmentPath(state.directory, generation.epoch, id);
    const created = yield* Effect.either(createFile(path, header, syncing));
    if (Either.isLeft(created)) return created.left;
    const next: SegmentState = {
      id,
      path,
      firstSequence,
      recordCount: 0,
      size: header.length,
      sealed: false,
      index: SegmentIndex.empty(),
    };
    generation.segments.push(next);
    generation.active = { segment: next, handle: created.right, crc: crc32c(header) };
    return undefined;
  });

/** Rotates now; a failure stops the writer. */
export const rotate = (writer: Writer): Effect.Effect<void, never, Disk> =>
  Effect.flatMap(sealAndStartNext(writer), (error) =>
    error === undefined ? Effect.void : failWith(writer, error),
  );

/**
 * Writes one batch of what is pending (and rotates when the segment is
 * full or passed its target). Runs under the semaphore; never fails: a disk
 * error is recorded in the state and fails the outstanding submissions.
 */
export const writeBatch = (writer: Writer): Effect.Effect<void, never, Disk> =>
  Effect.gen(function* () {
    const { state } = writer;
    if (state.failure !== undefined || state.pending.length === 0) return;
    const { count, bytes } = batchLength(state);
    if (count === 0) {
      // The next record would push the file past 1 GiB: seal first.
      return yield* rotate(writer);
    }
    const records = state.pending.splice(0, count);
    state.pendingBytes -= bytes;
    state.inFlight = records;
    const active = state.generation.active;
    const segment = active.segment;
    const buffer = layOut(records, bytes);
    const written = yield* Effect.either(
      Effect.gen(function* () {
        yield* writeAll(active.handle, segment.size, buffer);
        if (state.options.durability === "Maximal") yield* active.handle.sync();
      }),
    );
    if (Either.isLeft(written)) return yield* failWith(writer, written.left);
    const now = yield* Clock.currentTimeMillis;
    let offset = segment.size;
    for (const record of records) {
      SegmentIndex.note(segment.index, segment.recordCount, record.sequence, offset);
      segment.recordCount += 1;
      offset += record.size;
    }
    segment.size = offset;
    active.crc = crc32c(buffer, active.crc);
    state.inFlight = [];
    state.lastFlushAt = now;
    if (state.pending.length === 0) state.forced = false;
    // Rotation before resolving: once an append resolves, no write of its
    // batch (nor the rotation it caused) is still in flight.
    const rotationError =
      segment.size >= state.options.rotationTargetBytes
        ? yield* sealAndStartNext(writer)
        : undefined;
    resolveThrough(state, segment.firstSequence + segment.recordCount - 1);
    if (rotationError !== undefined) yield* failWith(writer, rotationError);
  });

/**
 * The flusher fiber: waits as the flush policy says, writes batches, stops
 * when the writer failed or when close has drained everything.
 */
export const flusher = (writer: Writer): Effect.Effect<void, never, Disk> =>
  Effect.gen(function* () {
    const { state } = writer;
    for (;;) {
      const now = yield* Clock.currentTimeMillis;
      if (state.failure !== undefined) return;
      if (state.closing && state.pending.length === 0) return;
      const decision = decide(state.options.flush, {
        pendingRecords: state.pending.length,
        lastFlushAt: state.lastFlushAt,
        now,
        forced: state.forced || state.closing,
      });
      switch (decision._tag) {
        case "Now":
          yield* writer.semaphore.withPermits(1)(writeBatch(writer));
          break;
        case "At":
          yield* Queue.take(writer.wake).pipe(
            Effect.timeoutOption(Duration.millis(Math.max(0, decision.at - now))),
          );
          break;
        case "Wait":
          yield* Queue.take(writer.wake);
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
  Effect.gen(function* () {
    const { state } = writer;
    const last = yield* Effect.sync(() => {
      const ticket = state.tickets[state.tickets.length - 1];
      if (ticket !== undefined) {
        state.forced = true;
        writer.wake.unsafeOffer(undefined);
      }
      return ticket;
    });
    if (last !== undefined) yield* Deferred.await(last.deferred);
    if (state.failure !== undefined) return yield* state.failure;
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
      writer.wake.unsafeOffer(undefined);
      return !wasClosing;
    });
    yield* Fiber.await(flusherFiber);
    if (first) {
      yield* writer.semaphore.withPermits(1)(
        Effect.gen(function* () {
          const { handle } = state.generation.active;
          if (state.failure === undefined && state.options.durability === "Segment") {
            const synced = yield* Effect.either(handle.sync());
            if (Either.isLeft(synced)) yield* failWith(writer, synced.left);
          }
          yield* Effect.ignore(handle.close());
          yield* Effect.sync(() => {
            for (const ticket of state.tickets)
              settle(ticket.deferred, Effect.fail(new StoreClosed({ path: state.directory })));
            state.tickets = [];
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
    yield* writer.semaphore.withPermits(1)(
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
