/**
 * The directory layout of a Store-v2 data directory (FORMAT.md, "Directory
 * layout"): where the marker, the pointer, the lock, each generation's
 * manifest and segments live, and how their names are spelled.
 *
 * Pure functions over path strings; nothing here touches the disk.
 */
import * as Path from "node:path";
import * as Files from "../disk/Files.js";
import {
  epochDirectoryName,
  parseEpochDirectoryName,
  parseSegmentFileName,
  segmentFileName,
} from "./internal/codec.js";

/** The authority marker, `DATA_DIR/STORE-V2`. */
export const markerName = "STORE-V2";
/** The generation pointer, `DATA_DIR/CURRENT`. */
export const currentName = "CURRENT";
/** The single-writer lock, `DATA_DIR/LOCK`. */
export const lockName = "LOCK";
/** The directory of generations, `DATA_DIR/epochs`. */
export const epochsName = "epochs";
/** A generation's manifest, `epochs/EPOCH/MANIFEST`. */
export const manifestName = "MANIFEST";
/** A generation's segment directory, `epochs/EPOCH/segments`. */
export const segmentsName = "segments";
/** Store-v1 roots are recognised by either of these entries (never created). */
export const storeV1MarkerName = "STORE";
/** `DATA_DIR/segments`: the other sign of a Store-v1 root. */
export const storeV1SegmentsName = "segments";
/** The suffix of the temporary files of STORE-V2, CURRENT and MANIFEST. */
export const temporarySuffix = Files.temporarySuffix;
/** The suffix of segment files. */
export const segmentSuffix = ".tay";
/**
 * A generation's one segment staging file, `epochs/EPOCH/SEGMENT.tmp`
 * (FORMAT.md, "Creating a segment"): a new segment's header is written and
 * synced here, then hard-linked into `segments/`. Readers ignore it.
 */
export const segmentStagingName = "SEGMENT.tmp";

/** `DATA_DIR/STORE-V2`. */
export const markerPath = (directory: string): string => Path.join(directory, markerName);
/** `DATA_DIR/CURRENT`. */
export const currentPath = (directory: string): string => Path.join(directory, currentName);
/** `DATA_DIR/LOCK`. */
export const lockPath = (directory: string): string => Path.join(directory, lockName);
/** `DATA_DIR/epochs`. */
export const epochsPath = (directory: string): string => Path.join(directory, epochsName);

/**
 * The name of epoch `epoch`'s directory: 20 zero-padded digits. Throws a
 * `RangeError` outside 1..2^53-1 (the store names only epochs it validated).
 *
 * @example epochName(1) === "00000000000000000001"
 */
export const epochName = (epoch: number): string => epochDirectoryName(epoch);

/** The epoch a directory name under `epochs/` denotes; `undefined` for any other name. */
export const parseEpochName = (name: string): number | undefined => parseEpochDirectoryName(name);

/** `epochs/EPOCH`. */
export const epochPath = (directory: string, epoch: number): string =>
  Path.join(epochsPath(directory), epochName(epoch));
/** `epochs/EPOCH/MANIFEST`. */
export const manifestPath = (directory: string, epoch: number): string =>
  Path.join(epochPath(directory, epoch), manifestName);
/** `epochs/EPOCH/segments`. */
export const segmentsPath = (directory: string, epoch: number): string =>
  Path.join(epochPath(directory, epoch), segmentsName);

/** `epochs/EPOCH/SEGMENT.tmp`. */
export const segmentStagingPath = (directory: string, epoch: number): string =>
  Path.join(epochPath(directory, epoch), segmentStagingName);

/** The file name of segment `id`: 20 digits and `.tay`. */
export const segmentName = (id: number): string => segmentFileName(id);

/**
 * The segment ID a file name stands for; `undefined` for any name that is not
 * exactly 20 decimal digits plus `.tay` (FORMAT.md: `UnexpectedEntry`), or an
 * ID of 0 or beyond 2^53-1.
 */
export const parseSegmentName = (name: string): number | undefined => parseSegmentFileName(name);

/** `epochs/EPOCH/segments/ID.tay`. */
export const segmentPath = (directory: string, epoch: number, id: number): string =>
  Path.join(segmentsPath(directory, epoch), segmentName(id));

/** `NAME.tmp` beside `path`. */
export const temporaryPath = Files.temporaryPath;

/** The directory holding `path` (the one to fsync after a rename or create). */
export const parentPath = Files.parentPath;
