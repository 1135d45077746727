/**
 * Creating a segment, as FORMAT.md's amendment of 2026-12-01 fixes it: a new
 * segment appears under its name whole, so that no crash of the process, at
 * any instant, leaves a highest segment shorter than its header.
 *
 * 1. remove `epochs/EPOCH/SEGMENT.tmp` if it exists (a leftover of an
 *    interrupted creation; it may be a second name of a live segment, so it
 *    is removed, never truncated or written through);
 * 2. create `SEGMENT.tmp` exclusively, write the 44-byte header, sync it;
 * 3. hard-link it to `segments/<ID>.tay` (atomic, fails if the name exists),
 *    sync `segments/`;
 * 4. remove `SEGMENT.tmp`.
 *
 * The syncs of steps 2 and 3 are the caller's to skip (the writer's
 * rotation under `Throughput`). The removal of step 4 is not synced: a
 * crash may bring the name back, and a returning `SEGMENT.tmp` is exactly
 * the leftover that step 1 and the readers already expect.
 *
 * Also here: the hard-link probe that init and activation run when they
 * create no segment, so a file system without hard links is refused there
 * and not at the first rotation.
 */
import * as Effect from "effect/Effect";
import { Disk, type DiskError, type FileHandle, type OpenOptions } from "../../disk/Disk.js";
import { removeIfPresent } from "../../disk/Files.js";
import * as Layout from "../Layout.js";
import { HardLinksUnsupported, type LinkingOperation, noHardLinkCodes } from "../StoreError.js";

/** What to create: segment `id` of generation `epoch` in the store at `directory`. */
export interface SegmentCreation {
  readonly directory: string;
  readonly epoch: number;
  readonly id: number;
  /** The segment's 44-byte header. */
  readonly header: Uint8Array;
  /** Sync the staged file and `segments/` (steps 2 and 3); false only under `Throughput`. */
  readonly sync: boolean;
  /** How the new segment is opened for appends (`O_DSYNC` under `Maximal`, see `appendOptions`). */
  readonly append: OpenOptions;
  /** Who creates it, for `HardLinksUnsupported`. */
  readonly operation: LinkingOperation;
}

/** link(2), with the codes of a file system without hard links as `HardLinksUnsupported`. */
const linkOrRefuse = (
  source: string,
  target: string,
  operation: LinkingOperation,
): Effect.Effect<void, DiskError | HardLinksUnsupported, Disk> =>
  Effect.flatMap(Disk, (disk) =>
    disk.link(source, target).pipe(
      Effect.catchIf(
        (error) => noHardLinkCodes.has(error.code),
        (cause) => Effect.fail(new HardLinksUnsupported({ path: target, operation, cause })),
      ),
    ),
  );

/**
 * Creates segment `creation.id` by the four steps of FORMAT.md and returns
 * it open for appends (`readWrite`, through its name in `segments/`, never
 * through the staging name). Fails with the first `DiskError`, or
 * `HardLinksUnsupported` when the file system refuses the link; before the
 * link nothing is under `segments/`, after it the segment is whole.
 *
 * @example
 *   const handle = yield* createSegment({ directory, epoch, id: 2, header,
 *     sync: true, append: { dataSync: true }, operation: "rotation" });
 */
export const createSegment = (
  creation: SegmentCreation,
): Effect.Effect<FileHandle, DiskError | HardLinksUnsupported, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const { directory, epoch, id, header, sync, append, operation } = creation;
    const staging = Layout.segmentStagingPath(directory, epoch);
    const target = Layout.segmentPath(directory, epoch, id);
    yield* removeIfPresent(staging, false);
    const staged = yield* disk.create(staging, header);
    yield* (sync ? staged.sync() : Effect.void).pipe(
      Effect.ensuring(Effect.ignore(staged.close())),
    );
    yield* linkOrRefuse(staging, target, operation);
    if (sync) yield* disk.syncDirectory(Layout.segmentsPath(directory, epoch));
    yield* disk.remove(staging);
    return yield* disk.open(target, "readWrite", append);
  });

/**
 * Checks that the file system takes hard links, without creating a
 * segment: links `existing` (a file of generation `epoch`: its MANIFEST at
 * init, its active segment at activation) to `SEGMENT.tmp` and removes that
 * name again. A crash in between leaves `SEGMENT.tmp` as a second name of
 * that file, which FORMAT.md already allows for (readers ignore it, the
 * next creation removes it); no byte of any file is written. Fails with
 * `HardLinksUnsupported` or a `DiskError`.
 */
export const probeHardLinks = (
  directory: string,
  epoch: number,
  existing: string,
  operation: LinkingOperation,
): Effect.Effect<void, DiskError | HardLinksUnsupported, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk;
    const staging = Layout.segmentStagingPath(directory, epoch);
    yield* removeIfPresent(staging, false);
    yield* linkOrRefuse(existing, staging, operation);
    yield* disk.remove(staging);
  });
