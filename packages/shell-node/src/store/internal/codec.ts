/**
 * The codec surface the store uses, in one place: the byte layer of
 * FORMAT.md (records, segment header and footer, marker, pointer, manifest)
 * and the event layer of EVENTS.md.
 */
export {
  appendEventRecord,
  appendBytes,
  appendRecord,
  type CorruptReason,
  type CurrentPointer,
  crc32c,
  type DecodedRecord,
  decodeCurrentPointer,
  decodeEvent,
  decodeEventAt,
  decodeManifest,
  decodeRecord,
  decodeSegmentFooter,
  decodeSegmentHeader,
  decodeStoreMarker,
  encodeCurrentPointer,
  encodeEvent,
  encodeManifest,
  encodeRecordInto,
  encodeSegmentFooter,
  encodeSegmentHeader,
  encodeStoreMarker,
  epochDirectoryName,
  type EventDecodeError,
  type FixedLayoutError,
  formatStoreId,
  manifestBytes,
  parseEpochDirectoryName,
  parseSegmentFileName,
  payloadBytesMax,
  type RecordFrame,
  recordBuffer,
  type RecordBuffer,
  recordFrame,
  recordSize,
  scanRecordAt,
  scanRecordHeaderAt,
  scanRecordStructureAt,
  type SegmentFooter,
  type SegmentHeader,
  type StoreMarker,
  segmentFileBytesMax,
  segmentFileName,
  segmentFooterBytes,
  segmentHeaderBytes,
  storeMarkerBytes,
  currentPointerBytes,
} from "@tay/codec";

import type { Manifest as ManifestModule } from "@tay/codec";

/** A generation's manifest (the codec exports `Manifest` as a namespace too). */
export type Manifest = ManifestModule.Manifest;
