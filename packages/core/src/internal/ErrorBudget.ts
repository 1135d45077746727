/**
 * How much failure text a job keeps.
 *
 * EVENTS.md lets a job keep the error of every failed attempt: up to 1,000
 * attempts of up to 65,535 bytes each, 65 MB. A canonical base must hold
 * each job inside one snapshot part, a record of at most 16 MiB, so such a
 * job could never be compacted. The deciders therefore cut an error that
 * would take the job's snapshot past that bound: the error keeps its head,
 * cut on a character boundary, and says how much was cut. The fold never
 * cuts anything: a history written by another writer with longer errors
 * still folds as it is (its compaction then fails with a typed error and
 * changes nothing).
 */
import * as Job from "../Job.js";
import * as Limits from "../Limits.js";
import { type JobError, snapshotPart } from "../Event.js";
import { recordBytes } from "./Encoded.js";
import { utf8Length } from "./Fields.js";

/** What one kept error adds to a snapshot estimate besides its text (as `recordBytes` counts it). */
const errorOverheadBytes = 64;

// Each kept error's UTF-8 length, measured once: a job's versions share
// their error objects, so a job failing for the n-th time measures one new
// text, not n of them.
const errorBytes = new WeakMap<JobError, number>();

const keptErrorBytes = (error: JobError): number => {
  let bytes = errorBytes.get(error);
  if (bytes === undefined) {
    bytes = errorOverheadBytes + Math.max(0, utf8Length(error.error));
    errorBytes.set(error, bytes);
  }
  return bytes;
};

/**
 * The estimated payload bytes of a snapshot part holding `job` alone, as
 * `recordBytes` counts it.
 */
export const jobSnapshotBytes = (job: Job.Job): number => {
  const withoutErrors = { ...Job.toSnapshot(job), errors: [] };
  let bytes = recordBytes(snapshotPart({ part: 0, lastJobId: 0, jobs: [withoutErrors] }));
  for (const error of job.errors) bytes += keptErrorBytes(error);
  return bytes;
};

/** The longest prefix of well-formed `text` whose UTF-8 form fits `bytesMax`. */
export const utf8Prefix = (text: string, bytesMax: number): string => {
  let bytes = 0;
  let index = 0;
  while (index < text.length) {
    const unit = text.charCodeAt(index);
    const pair = unit >= 0xd800 && unit <= 0xdbff;
    const size = unit < 0x80 ? 1 : unit < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > bytesMax) break;
    bytes += size;
    index += pair ? 2 : 1;
  }
  return text.slice(0, index);
};

/**
 * The error text `job` keeps for its current attempt: `error` itself while
 * the job's snapshot stays within a record with it, else its head followed
 * by `…[cut N of M bytes]`, or "" when not even the note fits.
 */
export const keptError = (job: Job.Job, error: string): string => {
  const length = utf8Length(error);
  // Every attempt still to fail (this one included) will add an error's
  // overhead even with an empty text: that much stays reserved, so the
  // estimate stays within a record whatever happens next.
  const attemptsLeft = Math.max(1, job.maxAttempts - job.errors.length);
  const room = Limits.payloadBytesMax - jobSnapshotBytes(job) - attemptsLeft * errorOverheadBytes;
  if (length <= room) return error;
  // The note's digits are bounded by the length's: measure it with the longest.
  const note = (cut: number) => `…[cut ${cut} of ${length} bytes]`;
  const noteBytes = utf8Length(note(length));
  if (room < noteBytes) return "";
  const head = utf8Prefix(error, room - noteBytes);
  return `${head}${note(length - utf8Length(head))}`;
};
