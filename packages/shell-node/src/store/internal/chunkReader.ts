/**
 * A segment's bytes, chunk after chunk, for the record scan of an open,
 * with the next chunk already on its way. While the scan decodes and folds
 * one chunk on the caller's thread, the thread pool reads the next into a
 * second buffer, so an open waits for the device (or the page cache's
 * copy) only where it is slower than the fold, not for every chunk on top
 * of it (docs/store.md, "Reading ahead while the open folds").
 *
 * A record cut by the end of a chunk is carried to the front of the next:
 * the chunk read ahead lands `carryBytesMax` bytes into its buffer, and the
 * cut record's bytes are copied in front of it. A record that does not fit
 * that room, or a next chunk that would not hold the whole record, is read
 * again from the file as before (the read ahead is waited for first and
 * left unused). Handles without `Read.into` (wrappers, the fault disk) read
 * each chunk when it is needed, into a new buffer, as before.
 */
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import * as Fiber from "effect/Fiber";
import { DiskError, type FileHandle } from "../../disk/Disk.js";
import { readUpTo } from "../../disk/Files.js";

/** The error for a file that ended before `position`, inside the size it reported. */
export const earlyEnd = (path: string, position: number): DiskError =>
  new DiskError({
    operation: "read",
    path,
    code: "EIO",
    detail: `file ended before ${position}, inside the size it reported`,
  });

/** Room kept in front of a chunk read ahead for the record the previous chunk cut. */
export const carryBytesMax = 64 * 1024;

/** A chunk read ahead: where, how long, the buffer it lands in (at `carryBytesMax`), the read. */
interface Ahead {
  readonly offset: number;
  readonly length: number;
  readonly buffer: Uint8Array;
  readonly read: Fiber.RuntimeFiber<Either.Either<number, DiskError>>;
}

/**
 * The two buffers chunks are read into: the one the scan reads from now,
 * and the one the next chunk lands in. One pair serves every segment an
 * open scans in turn (each scan waits for its read ahead before it ends),
 * so their off-heap bytes are made once, not per segment.
 */
export interface ChunkBuffers {
  front: Uint8Array;
  back: Uint8Array;
}

/** A pair of buffers not yet made (each is made on its first use, no larger than needed). */
export const chunkBuffers = (): ChunkBuffers => ({
  front: new Uint8Array(0),
  back: new Uint8Array(0),
});

/** The chunks of one segment file, read one ahead. */
export class ChunkReader {
  private ahead: Ahead | undefined = undefined;

  constructor(
    private readonly buffers: ChunkBuffers,
    private readonly handle: FileHandle,
    /** The file's size: no buffer is made larger than it needs. */
    private readonly size: number,
    /** Bytes a chunk read ahead holds at most. */
    readonly chunkBytes: number,
    /** The error for a file that ended before `position`, inside its size. */
    private readonly earlyEnd: (position: number) => DiskError,
  ) {}

  /**
   * At least `length` bytes from `offset` (fewer only where the file ends
   * early: then `earlyEnd`), beginning with `carried`, the bytes from
   * `offset` the caller holds and has not decoded yet. Then starts reading
   * the chunk after the bytes answered, up to `end`. The caller reads the
   * answer only until its next call.
   */
  next(
    offset: number,
    carried: Uint8Array,
    length: number,
    end: number,
  ): Effect.Effect<Uint8Array, DiskError> {
    return Effect.gen(this, function* () {
      const into = this.handle.read.into;
      if (into === undefined) {
        return yield* this.whole(readUpTo(this.handle, offset, length), offset, length);
      }
      const continued = yield* this.continued(offset, carried, length);
      const chunk = continued ?? (yield* this.readFront(into, offset, length));
      this.readAhead(into, offset + chunk.length, end);
      return chunk;
    });
  }

  /** Waits for a read ahead still under way (the scan ended before it needed it). */
  settle(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const { ahead } = this;
      this.ahead = undefined;
      return ahead === undefined ? Effect.void : Effect.asVoid(Fiber.await(ahead.read));
    });
  }

  /**
   * `carried` followed by the chunk read ahead, when that chunk starts right
   * after it and the two hold `length` bytes; undefined otherwise (the read
   * ahead is over then, and its buffer free).
   */
  private continued(offset: number, carried: Uint8Array, length: number) {
    return Effect.gen(this, function* () {
      const { ahead } = this;
      if (ahead === undefined) return undefined;
      this.ahead = undefined;
      const outcome = yield* Fiber.join(ahead.read);
      const usable =
        ahead.offset === offset + carried.length &&
        carried.length <= carryBytesMax &&
        carried.length + ahead.length >= length;
      if (!usable) return undefined;
      if (Either.isLeft(outcome)) return yield* Effect.fail(outcome.left);
      if (outcome.right < ahead.length) {
        return yield* Effect.fail(this.earlyEnd(ahead.offset + ahead.length));
      }
      const start = carryBytesMax - carried.length;
      ahead.buffer.set(carried, start);
      // The chunk now lives in what was the back buffer; the next lands in the other.
      this.buffers.back = this.buffers.front;
      this.buffers.front = ahead.buffer;
      return ahead.buffer.subarray(start, carryBytesMax + ahead.length);
    });
  }

  /** `length` bytes at `offset` into the front buffer (what it held is read again). */
  private readFront(
    into: NonNullable<FileHandle["read"]["into"]>,
    offset: number,
    length: number,
  ): Effect.Effect<Uint8Array, DiskError> {
    // No bigger than the segment: a 4 MiB buffer made (and zeroed) for each
    // of a thousand 2 KiB segments made their open 15 times slower.
    const { buffers } = this;
    if (buffers.front.length < length) {
      buffers.front = new Uint8Array(Math.max(length, Math.min(this.chunkBytes, this.size)));
    }
    const target = buffers.front;
    return this.whole(
      Effect.map(into(offset, target, length), (count) => target.subarray(0, count)),
      offset,
      length,
    );
  }

  /** Starts reading the chunk at `from` (up to `end`) into the back buffer. */
  private readAhead(into: NonNullable<FileHandle["read"]["into"]>, from: number, end: number) {
    if (from >= end) return;
    const length = Math.min(this.chunkBytes, end - from);
    const { buffers } = this;
    if (buffers.back.length < carryBytesMax + length) {
      buffers.back = new Uint8Array(
        carryBytesMax + Math.max(length, Math.min(this.chunkBytes, this.size)),
      );
    }
    const buffer = buffers.back;
    // Started now, not at the scan's next yield: the point is that the pool
    // reads while this thread decodes and folds the chunk just answered.
    const read = Effect.runFork(Effect.either(into(from, buffer.subarray(carryBytesMax), length)));
    this.ahead = { offset: from, length, buffer, read };
  }

  /** `read`'s `length` bytes from `offset`, or `earlyEnd` when the file gave fewer. */
  private whole(
    read: Effect.Effect<Uint8Array, DiskError>,
    offset: number,
    length: number,
  ): Effect.Effect<Uint8Array, DiskError> {
    return Effect.flatMap(read, (bytes) =>
      bytes.length < length ? Effect.fail(this.earlyEnd(offset + length)) : Effect.succeed(bytes),
    );
  }
}
