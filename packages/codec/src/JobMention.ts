/**
 * The bytes that every encoded event about one job holds: what a reader
 * looks for in a record's payload to learn, without decoding it, that the
 * record cannot be about that job.
 *
 * Every event that names a job carries it as the map key `job_id` with an
 * integer value (EVENTS.md, EVENTS-V3.md), and so does every job of a
 * snapshot part. FORMAT.md fixes the bytes: a map key is a u32 length then
 * its UTF-8, with no tag; an integer is the tag 0x03 then 8 bytes,
 * big-endian two's complement; and the encoding is canonical, so there is
 * no other way to write it. A mutation (8,1) carries each inner event's
 * payload verbatim as bytes, so the mention is in the mutation's payload
 * too. The key `active_job_id` ((11,2), (12,2)) ends with `job_id`, so it
 * holds the mention as well. A list of ids (`active_job_ids` of (13,2) and
 * (13,3)) does not: a reader that wants those looks for `listedJobIdsKey`.
 *
 * The mention is necessary, not sufficient (an argument's bytes may hold
 * it): a record that has it is decoded and its events are looked at.
 */

/** A map key as FORMAT.md encodes it: its UTF-8's length (u32), then the UTF-8. */
const keyBytes = (key: string): Uint8Array => {
  const text = new TextEncoder().encode(key);
  const bytes = new Uint8Array(4 + text.length);
  new DataView(bytes.buffer).setUint32(0, text.length);
  bytes.set(text, 4);
  return bytes;
};

/** The key of a checkpoint's list of job ids, as it is encoded (a length, then UTF-8). */
export const listedJobIdsKey: Uint8Array = keyBytes("active_job_ids");

/**
 * `job_id` (the key's UTF-8, without its length: `active_job_id` ends with
 * it), the integer tag, and `jobId` as 8 big-endian bytes. `jobId` is a job
 * id: a positive safe integer.
 */
export const jobMention = (jobId: number): Uint8Array => {
  const key = new TextEncoder().encode("job_id");
  const bytes = new Uint8Array(key.length + 9);
  bytes.set(key, 0);
  bytes[key.length] = 0x03;
  const view = new DataView(bytes.buffer);
  // Two halves: a safe integer needs 53 bits, more than the 32 of a bitwise operation.
  view.setUint32(key.length + 1, Math.floor(jobId / 2 ** 32));
  view.setUint32(key.length + 5, jobId >>> 0);
  return bytes;
};

/**
 * What a reader of one job's history looks for (core's `JobHistory`): the
 * job's mention (its events, a snapshot part holding it, a schedule's
 * delivery of it) and a checkpoint's list key (a schedule listing it). One
 * list for `tay job` and the server's route, so the two find the same
 * records.
 */
export const historyNeedles = (jobId: number): ReadonlyArray<Uint8Array> => [
  jobMention(jobId),
  listedJobIdsKey,
];
