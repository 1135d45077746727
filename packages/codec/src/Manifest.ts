/**
 * MANIFEST (`TAYN` v1, 68 bytes): the immutable description of one
 * generation, in `epochs/EPOCH/`; and the names of those epoch directories.
 */
import * as E from "fp-ts/lib/Either.js";
import { formatDecimalName, parseDecimalName } from "./internal/decimalName.js";
import {
  assertEncodable,
  assertStoreId,
  type FixedLayout,
  type FixedLayoutError,
  invalidField,
  isU64,
  openFixed,
  readField,
  readStoreId,
  sealFixed,
  startFixed,
  storeIdOffset,
  writeField,
} from "./internal/fixedLayout.js";

export type { FixedLayoutError } from "./internal/fixedLayout.js";

/** Size of a MANIFEST file. */
export const manifestBytes = 68;

/**
 * A generation: its epoch (>= 1, equal to its directory name), its parent
 * (0 for the first generation, otherwise below `epoch`), the first sequence
 * of its records (>= 1), how many leading records form its canonical base,
 * and when it was made (ms).
 */
export interface Manifest {
  readonly storeId: Uint8Array;
  readonly epoch: number;
  readonly parentEpoch: number;
  readonly firstSequence: number;
  readonly baseRecordCount: number;
  readonly createdAt: number;
}

const layout: FixedLayout = { structure: "Manifest", magic: "TAYN", size: manifestBytes };
const epochOffset = 24;
const parentEpochOffset = 32;
const firstSequenceOffset = 40;
const baseRecordCountOffset = 48;
const createdAtOffset = 56;

/**
 * Encodes a MANIFEST. Fields outside their ranges (epoch or first sequence
 * below 1, parent epoch not below epoch, anything past 2^53-1, a STORE_ID
 * that is not 16 bytes) are programmer errors and throw a `RangeError`.
 */
export const encodeManifest = (manifest: Manifest): Uint8Array => {
  assertStoreId(layout, manifest.storeId);
  assertEncodable(isU64(manifest.epoch) && manifest.epoch >= 1, layout, "epoch must be 1..2^53-1");
  assertEncodable(
    isU64(manifest.parentEpoch) && manifest.parentEpoch < manifest.epoch,
    layout,
    "parent epoch must be 0..epoch-1",
  );
  assertEncodable(
    isU64(manifest.firstSequence) && manifest.firstSequence >= 1,
    layout,
    "first sequence must be 1..2^53-1",
  );
  assertEncodable(isU64(manifest.baseRecordCount), layout, "base record count must be 0..2^53-1");
  assertEncodable(isU64(manifest.createdAt), layout, "created_at must be 0..2^53-1 ms");
  const { bytes, view } = startFixed(layout);
  bytes.set(manifest.storeId, storeIdOffset);
  writeField(view, epochOffset, manifest.epoch);
  writeField(view, parentEpochOffset, manifest.parentEpoch);
  writeField(view, firstSequenceOffset, manifest.firstSequence);
  writeField(view, baseRecordCountOffset, manifest.baseRecordCount);
  writeField(view, createdAtOffset, manifest.createdAt);
  return sealFixed(layout, bytes, view);
};

/**
 * Decodes a MANIFEST (exactly 68 bytes): size, magic, version, CRC,
 * reserved bytes, then each u64 field in order (`BeyondSafeInteger` past
 * 2^53-1), then `InvalidField`: epoch 0 (`Zero`), parent epoch not below
 * epoch (`Inconsistent`), first sequence 0 (`Zero`). Whether the epoch
 * equals its directory's name is the caller's check. Never throws.
 */
export const decodeManifest = (bytes: Uint8Array): E.Either<FixedLayoutError, Manifest> => {
  const opened = openFixed(layout, bytes);
  if (E.isLeft(opened)) return opened;
  const view = opened.right;
  const epoch = readField(layout, view, epochOffset, "epoch");
  if (E.isLeft(epoch)) return epoch;
  const parentEpoch = readField(layout, view, parentEpochOffset, "parentEpoch");
  if (E.isLeft(parentEpoch)) return parentEpoch;
  const firstSequence = readField(layout, view, firstSequenceOffset, "firstSequence");
  if (E.isLeft(firstSequence)) return firstSequence;
  const baseRecordCount = readField(layout, view, baseRecordCountOffset, "baseRecordCount");
  if (E.isLeft(baseRecordCount)) return baseRecordCount;
  const createdAt = readField(layout, view, createdAtOffset, "createdAt");
  if (E.isLeft(createdAt)) return createdAt;
  if (epoch.right === 0) return E.left(invalidField(layout, "epoch", epochOffset, "Zero"));
  if (parentEpoch.right >= epoch.right) {
    return E.left(invalidField(layout, "parentEpoch", parentEpochOffset, "Inconsistent"));
  }
  if (firstSequence.right === 0) {
    return E.left(invalidField(layout, "firstSequence", firstSequenceOffset, "Zero"));
  }
  return E.right({
    storeId: readStoreId(bytes, storeIdOffset),
    epoch: epoch.right,
    parentEpoch: parentEpoch.right,
    firstSequence: firstSequence.right,
    baseRecordCount: baseRecordCount.right,
    createdAt: createdAt.right,
  });
};

const epochDirectoryPattern = /^[0-9]{20}$/;

/**
 * The directory name of epoch `epoch` under `epochs/`: 20 zero-padded
 * digits. Throws a `RangeError` for an epoch outside 1..2^53-1.
 *
 * @example epochDirectoryName(1) === "00000000000000000001"
 */
export const epochDirectoryName = (epoch: number): string => formatDecimalName(epoch, "epoch");

/**
 * The epoch a directory name denotes, or undefined when the name is not
 * exactly 20 decimal digits, or denotes 0 or an epoch beyond 2^53-1.
 */
export const parseEpochDirectoryName = (name: string): number | undefined =>
  epochDirectoryPattern.test(name) ? parseDecimalName(name) : undefined;
