/**
 * Activation: after validation, the writer of the validated generation is
 * set up — the highest segment re-checked and opened for appends, or the
 * next segment created — and its flusher forked. Moved out of `Store.ts`;
 * `open` calls it under `acquireRelease`.
 */
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { Disk, type FileHandle, type OpenOptions } from "../../disk/Disk.js";
import { readUpTo } from "../../disk/Files.js";
import * as Layout from "../Layout.js";
import { ActiveSegmentChanged } from "../StoreError.js";
import { appendOptions, type StoreOptions } from "../StoreOptions.js";
import { crc32c, encodeSegmentHeader } from "./codec.js";
import type { Validated } from "./recovery.js";
import { createSegment, probeHardLinks } from "./segmentCreate.js";
import * as SegmentIndex from "./segmentIndex.js";
import type { SegmentState, StoreState } from "./storeState.js";
import * as Writer from "./writer.js";
import { WrittenMarks } from "./writtenMarks.js";

const segmentStateOf = (segment: Validated<unknown>["segments"][number]): SegmentState => ({
  id: segment.segmentId,
  path: segment.path,
  firstSequence: segment.firstSequence,
  recordCount: segment.recordCount,
  size: segment.size,
  sealed: segment.sealed,
  crc: segment.crc,
  index: segment.index,
});

/** The segment appends go to: its state, its open handle, the running CRC. */
interface Activated {
  readonly active: SegmentState;
  readonly handle: FileHandle;
  readonly crc: number;
}

/**
 * Reopens the highest segment, which validation found active, for
 * appends: its size and last record must be what validation saw (else
 * another writer touched it), and the file system must take hard links
 * (no segment is created now, but rotation will need one: refused here,
 * not at the first rotation).
 */
const reopenActive = <S>(
  validated: Validated<S>,
  highest: Validated<S>["segments"][number],
  active: SegmentState,
  append: OpenOptions,
) =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const handle = yield* disk.open(highest.path, "readWrite", append);
    const checked = yield* Effect.either(
      Effect.gen(function* () {
        const size = yield* handle.size();
        if (size !== highest.size) {
          return yield* new ActiveSegmentChanged({ path: highest.path, reason: "Size" });
        }
        const tail = yield* readUpTo(
          handle,
          highest.lastRecordOffset,
          size - highest.lastRecordOffset,
        );
        if (crc32c(tail) !== highest.tailCrc) {
          return yield* new ActiveSegmentChanged({ path: highest.path, reason: "LastRecord" });
        }
        yield* probeHardLinks(
          validated.directory,
          validated.manifest.epoch,
          highest.path,
          "activation",
        );
      }),
    );
    if (Either.isLeft(checked)) {
      yield* Effect.ignore(handle.close());
      return yield* Effect.fail(checked.left);
    }
    return { active, handle, crc: highest.crc } satisfies Activated;
  });

/** Creates the next segment (header only, staged and hard-linked into place, synced). */
const createNext = <S>(validated: Validated<S>, id: number, append: OpenOptions) =>
  Effect.gen(function* () {
    const epoch = validated.manifest.epoch;
    const firstSequence = validated.lastSequence + 1;
    const header = encodeSegmentHeader({
      segmentId: id,
      firstSequence,
      storeId: validated.marker.storeId,
    });
    const handle = yield* createSegment({
      directory: validated.directory,
      epoch,
      id,
      header,
      sync: true,
      append,
      operation: "activation",
    });
    const active: SegmentState = {
      id,
      path: Layout.segmentPath(validated.directory, epoch, id),
      firstSequence,
      recordCount: 0,
      size: header.length,
      sealed: false,
      crc: 0,
      index: SegmentIndex.empty(),
    };
    return { active, handle, crc: crc32c(header) } satisfies Activated;
  });

/**
 * Opens the validated generation's writer: re-checks the highest segment if
 * it is active (size and last record unchanged since validation), checks
 * that the file system takes hard links, and opens it for appending;
 * otherwise creates the next segment (header only, staged and hard-linked
 * into place, file and directory fsynced under every policy). Fails with
 * `ActiveSegmentChanged`, `HardLinksUnsupported` or a `DiskError`.
 */
/**
 * The writer's clock, made outside `activate`: a closure made inside it
 * would keep `activate`'s scope, and with it the validation's projection
 * state (the open's whole fold), for as long as the writer lives.
 */
const nowOf = (clock: Clock.Clock) => (): number => clock.unsafeCurrentTimeMillis();

export const activate = <S>(validated: Validated<S>, options: StoreOptions) =>
  Effect.gen(function* () {
    const highest = validated.segments[validated.segments.length - 1];
    const segments = validated.segments.map(segmentStateOf);
    const append = appendOptions(options.durability);
    const lastActive = segments[segments.length - 1];
    const { active, handle, crc } =
      highest !== undefined && !highest.sealed && lastActive !== undefined
        ? yield* reopenActive(validated, highest, lastActive, append)
        : yield* createNext(validated, (highest?.segmentId ?? 0) + 1, append);
    if (active !== lastActive) segments.push(active);
    const state: StoreState = {
      directory: validated.directory,
      options,
      generation: {
        epoch: validated.manifest.epoch,
        manifest: validated.manifest,
        storeId: validated.marker.storeId,
        segments,
        active: { segment: active, handle, crc },
      },
      nextSequence: validated.lastSequence + 1,
      pending: [],
      pendingBytes: 0,
      inFlight: [],
      tickets: [],
      failure: undefined,
      closing: false,
      gate: undefined,
      forced: false,
      lastFlushAt: yield* Clock.currentTimeMillis,
      orphans: [...validated.orphans],
      marks: new WrittenMarks(),
    };
    const writer = Writer.make(state, yield* Effect.context<Disk>(), nowOf(yield* Effect.clock));
    // Activation runs inside acquireRelease's uninterruptible acquire, and a
    // fork inherits that: the flusher must be interruptible for its timed waits.
    const flusherFiber = yield* Effect.forkDaemon(Effect.interruptible(Writer.flusher(writer)));
    return { writer, flusherFiber };
  });
