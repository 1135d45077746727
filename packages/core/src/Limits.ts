/**
 * Named limits of the event model (EVENTS.md field kinds). Every bound the
 * codec and the deciders check lives here, so both sides agree.
 */

/** `name` fields (queue, worker, schedule id): 1..255 UTF-8 bytes. */
export const nameBytesMin = 1;
export const nameBytesMax = 255;

/** `text` fields (errors, reasons, cron): 0..65,535 UTF-8 bytes. */
export const textBytesMax = 65_535;

/** Job priority: 0 (first) .. 9. */
export const priorityMin = 0;
export const priorityMax = 9;

/** A job's max_attempts: 1..1000. */
export const maxAttemptsMin = 1;
export const maxAttemptsMax = 1000;

/** `id` fields: 1..2^53-1. */
export const idMin = 1;
export const idMax = Number.MAX_SAFE_INTEGER;

/** `time` fields: 0..2^53-1 milliseconds since the Unix epoch. */
export const timeMin = 0;
export const timeMax = Number.MAX_SAFE_INTEGER;

/** Largest record payload (FORMAT.md "Record v1"): 16 MiB. */
export const payloadBytesMax = 16_777_216;

/** Most records one decision emits (claims, rescues, promotions, ticks); callers loop for more. */
export const decisionRecordsMax = 10_000;

/** A (24,3) rate limit's `count`: 1..10,000 starts per window (EVENTS-V3.md). */
export const rateCountMin = 1;
export const rateCountMax = 10_000;

/** A (24,3) rate limit's `per_ms`: a window of 1 ms .. one day. */
export const ratePerMsMin = 1;
export const ratePerMsMax = 86_400_000;

/** Most (11,2) occurrences one tick delivers for a schedule under catch-up "all" (EVENTS-V3.md). */
export const catchUpAllPerTickMax = 1_000;
