/**
 * CURRENT, the pointer to the current generation (`TAYC` v1, 36 bytes),
 * replaced atomically to switch epochs.
 */
import * as E from "fp-ts/lib/Either.js";
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

/** Size of the CURRENT file. */
export const currentPointerBytes = 36;

/** Which store, and which of its epochs (>= 1) is current. */
export interface CurrentPointer {
  readonly storeId: Uint8Array;
  readonly epoch: number;
}

const layout: FixedLayout = {
  structure: "CurrentPointer",
  magic: "TAYC",
  size: currentPointerBytes,
};
const epochOffset = 24;

/**
 * Encodes CURRENT. A STORE_ID that is not 16 bytes or an epoch outside
 * 1..2^53-1 is a programmer error and throws a `RangeError`.
 *
 * @example encodeCurrentPointer({ storeId, epoch: 1 }) // FORMAT.md's vector
 */
export const encodeCurrentPointer = (pointer: CurrentPointer): Uint8Array => {
  assertStoreId(layout, pointer.storeId);
  assertEncodable(isU64(pointer.epoch) && pointer.epoch >= 1, layout, "epoch must be 1..2^53-1");
  const { bytes, view } = startFixed(layout);
  bytes.set(pointer.storeId, storeIdOffset);
  writeField(view, epochOffset, pointer.epoch);
  return sealFixed(layout, bytes, view);
};

/**
 * Decodes CURRENT (exactly 36 bytes): size, magic, version, CRC, reserved
 * bytes, then the epoch (`BeyondSafeInteger` past 2^53-1, `InvalidField`
 * `Zero` for 0). Never throws.
 */
export const decodeCurrentPointer = (
  bytes: Uint8Array,
): E.Either<FixedLayoutError, CurrentPointer> => {
  const opened = openFixed(layout, bytes);
  if (E.isLeft(opened)) return opened;
  const epoch = readField(layout, opened.right, epochOffset, "epoch");
  if (E.isLeft(epoch)) return epoch;
  if (epoch.right === 0) return E.left(invalidField(layout, "epoch", epochOffset, "Zero"));
  return E.right({ storeId: readStoreId(bytes, storeIdOffset), epoch: epoch.right });
};
