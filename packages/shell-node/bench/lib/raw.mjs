// The physical limit of the disk under the data directory: a plain Node loop
// appending `records` records of `recordBytes` bytes in writes of `batch`
// records, with an fdatasync after each write (or none). Synchronous calls,
// no encoding, no bookkeeping: nothing a queue can do with the same syncs
// goes faster.
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * Appends `records` records in writes of `batch` records to a new file in
 * `directory`, syncing each write when `sync`. Returns the time, the write
 * count and the rates (records/s, bytes/s).
 */
export const rawAppendLoop = ({ directory, recordBytes, records, batch, sync }) => {
  const path = join(directory, `raw-${process.pid}-${batch}-${sync ? "sync" : "nosync"}.dat`);
  const full = Buffer.alloc(recordBytes * batch, 0x5a);
  const fd = openSync(path, "w");
  let position = 0;
  let writes = 0;
  let left = records;
  const started = performance.now();
  try {
    while (left > 0) {
      const count = Math.min(batch, left);
      const bytes = count * recordBytes;
      let done = 0;
      while (done < bytes) done += writeSync(fd, full, done, bytes - done, position + done);
      position += bytes;
      if (sync) fdatasyncSync(fd);
      writes += 1;
      left -= count;
    }
  } finally {
    closeSync(fd);
  }
  const seconds = (performance.now() - started) / 1000;
  rmSync(path, { force: true });
  return {
    seconds,
    writes,
    bytes: position,
    recordsPerSecond: records / seconds,
    bytesPerSecond: position / seconds,
  };
};
