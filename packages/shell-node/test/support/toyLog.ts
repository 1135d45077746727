/**
 * A toy append-only log store over the `Disk` service, for testing the
 * crash harness itself: "/store/log" holds 8-byte records (a 32-bit value
 * and a 32-bit check word); a protocol says when a value is acknowledged.
 * The testkit's `crashProperty` suite uses it too.
 */
import { Effect } from "effect";
import type * as Crash from "../../src/disk/Crash.js";
import type * as Disk from "../../src/disk/Disk.js";
import type * as FaultDisk from "../../src/disk/FaultDisk.js";

// The toy store: "/store/log" holds 8-byte records, a 32-bit value and a 32-bit check word.
export const storeDirectory = "/store";
export const logPath = "/store/log";
export const recordBytes = 8;
const checkMask = 0x5a5a_5a5a;

export const encodeRecord = (value: number): Uint8Array => {
  const record = new Uint8Array(recordBytes);
  const view = new DataView(record.buffer);
  view.setUint32(0, value);
  view.setUint32(4, (value ^ checkMask) >>> 0);
  return record;
};

/** Values of the complete, valid records at the start of the log (a torn tail is ignored). */
export const decodeLog = (bytes: Uint8Array): ReadonlyArray<number> => {
  const values: Array<number> = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = 0; offset + recordBytes <= bytes.length; offset += recordBytes) {
    const value = view.getUint32(offset);
    if (view.getUint32(offset + 4) !== (value ^ checkMask) >>> 0) break;
    values.push(value);
  }
  return values;
};

/** Writes every byte, looping over short writes. */
const writeAll = (file: Disk.FileHandle, position: number, bytes: Uint8Array) =>
  Effect.gen(function* () {
    let done = 0;
    while (done < bytes.length) done += yield* file.write(position + done, bytes.subarray(done));
  });

export type Protocol = "correct" | "acknowledgeBeforeSync" | "noDirectorySync";

/** Appends `values` to a new log, acknowledging each one as the protocol decides. */
export const appendLog =
  (protocol: Protocol, values: ReadonlyArray<number>): Crash.Workload<number> =>
  (disk, acknowledge) =>
    Effect.gen(function* () {
      const file = yield* disk.open(logPath, "createExclusive");
      if (protocol !== "noDirectorySync") yield* disk.syncDirectory(storeDirectory);
      for (const [index, value] of values.entries()) {
        yield* writeAll(file, index * recordBytes, encodeRecord(value));
        if (protocol === "acknowledgeBeforeSync") yield* acknowledge(value);
        yield* file.sync();
        if (protocol !== "acknowledgeBeforeSync") yield* acknowledge(value);
      }
      yield* file.close();
    });

/** Every acknowledged value is in the log, in order, from the start. */
export const checkLog: Crash.Check<number> = (disk, acknowledged) =>
  Effect.gen(function* () {
    const exists = yield* Effect.either(disk.stat(logPath));
    if (exists._tag === "Left") {
      if (acknowledged.length === 0) return;
      return yield* Effect.fail(
        `the log is missing but ${acknowledged.length} values were acknowledged`,
      );
    }
    const values = decodeLog(yield* disk.readFile(logPath));
    const kept = values.slice(0, acknowledged.length);
    if (
      kept.length !== acknowledged.length ||
      kept.some((value, index) => value !== acknowledged[index])
    ) {
      return yield* Effect.fail(
        `acknowledged ${acknowledged.join(",")} but the log holds ${values.join(",")}`,
      );
    }
  });

export const setup = (disk: FaultDisk.FaultDisk) =>
  Effect.sync(() => disk.seedDirectory(storeDirectory));
