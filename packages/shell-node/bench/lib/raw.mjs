// The physical limit of the disk under the data directory: a plain Node loop
// appending `records` records of `recordBytes` bytes in writes of `batch`
// records, with an fdatasync after each write (or none, or through an
// O_DSYNC descriptor, as Tay's `Maximal` writes). Synchronous calls, no
// encoding, no bookkeeping: nothing a queue can do with the same syncs goes
// faster, and no job can be acknowledged durably sooner than one write.
import { closeSync, constants, fdatasyncSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * Appends `records` records in writes of `batch` records to a new file in
 * `directory`, syncing each write when `sync` (an fdatasync after it, or,
 * with `dsync`, the write itself on an O_DSYNC descriptor). Returns the
 * time, the write count and the rates (records/s, bytes/s); with
 * `latencies`, also each durable write's time in ms (write + sync), sorted.
 */
export const rawAppendLoop = ({
  directory,
  recordBytes,
  records,
  batch,
  sync,
  dsync = false,
  latencies = false,
}) => {
  const mode = dsync ? "dsync" : sync ? "sync" : "nosync";
  const path = join(directory, `raw-${process.pid}-${batch}-${mode}.dat`);
  const full = Buffer.alloc(recordBytes * batch, 0x5a);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC;
  const fd = openSync(path, dsync ? flags | constants.O_DSYNC : flags);
  const times = latencies ? [] : undefined;
  let position = 0;
  let writes = 0;
  let left = records;
  const started = performance.now();
  try {
    while (left > 0) {
      const count = Math.min(batch, left);
      const bytes = count * recordBytes;
      const writeStarted = times === undefined ? 0 : performance.now();
      let done = 0;
      while (done < bytes) done += writeSync(fd, full, done, bytes - done, position + done);
      position += bytes;
      if (sync && !dsync) fdatasyncSync(fd);
      times?.push(performance.now() - writeStarted);
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
    ...(times === undefined ? {} : { latencies: times.sort((left, right) => left - right) }),
  };
};
