/**
 * @tay/codec — bytes <-> typed records, values and events, exactly as
 * FORMAT.md and EVENTS.md fix them. No decoder throws, for any input.
 *
 * Every module is exported both flat (the names: `crc32c`,
 * `decodeRecord`, ...) and as a namespace (`Record.decodeRecord`).
 */
export * from "./Crc32c.js";
export * from "./StoreId.js";
export * from "./Value.js";
export * from "./Record.js";
export * from "./Segment.js";
export * from "./Marker.js";
export * from "./Current.js";
export * from "./Manifest.js";
export * from "./Payload.js";
export * from "./Event.js";
export * from "./Explain.js";
export * from "./JobMention.js";
export * as Crc32c from "./Crc32c.js";
export * as StoreId from "./StoreId.js";
export * as Value from "./Value.js";
export * as Record from "./Record.js";
export * as Segment from "./Segment.js";
export * as Marker from "./Marker.js";
export * as Current from "./Current.js";
export * as Manifest from "./Manifest.js";
export * as Payload from "./Payload.js";
export * as Event from "./Event.js";
export * as Explain from "./Explain.js";
export * as JobMention from "./JobMention.js";
