/**
 * STORE-V2, the authority marker (`TAYM` v1, 36 bytes): the file that makes
 * a directory a Store-v2 root and fixes its STORE_ID and creation time.
 */
import * as E from "fp-ts/lib/Either.js";
import {
  assertEncodable,
  assertStoreId,
  type FixedLayout,
  type FixedLayoutError,
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

/** Size of the STORE-V2 file. */
export const storeMarkerBytes = 36;

/** The marker's content: the store's identity and when it was created (ms). */
export interface StoreMarker {
  readonly storeId: Uint8Array;
  readonly createdAt: number;
}

const layout: FixedLayout = { structure: "StoreMarker", magic: "TAYM", size: storeMarkerBytes };
const createdAtOffset = 24;

/**
 * Encodes STORE-V2. A STORE_ID that is not 16 bytes, or a creation time
 * outside 0..2^53-1, is a programmer error (the store makes both) and
 * throws a `RangeError`.
 */
export const encodeStoreMarker = (marker: StoreMarker): Uint8Array => {
  assertStoreId(layout, marker.storeId);
  assertEncodable(isU64(marker.createdAt), layout, "created_at must be 0..2^53-1 ms");
  const { bytes, view } = startFixed(layout);
  bytes.set(marker.storeId, storeIdOffset);
  writeField(view, createdAtOffset, marker.createdAt);
  return sealFixed(layout, bytes, view);
};

/**
 * Decodes STORE-V2 (exactly 36 bytes): size, magic, version, CRC, reserved
 * bytes, then created_at (`BeyondSafeInteger` past 2^53-1). Never throws.
 */
export const decodeStoreMarker = (bytes: Uint8Array): E.Either<FixedLayoutError, StoreMarker> => {
  const opened = openFixed(layout, bytes);
  if (E.isLeft(opened)) return opened;
  const createdAt = readField(layout, opened.right, createdAtOffset, "createdAt");
  if (E.isLeft(createdAt)) return createdAt;
  return E.right({ storeId: readStoreId(bytes, storeIdOffset), createdAt: createdAt.right });
};
