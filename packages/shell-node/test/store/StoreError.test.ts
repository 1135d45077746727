/**
 * Every typed error carries its one line as `message`: a program that only
 * logs `error.message` (or lets Node print the error) still reads the
 * reason, the file, the offset and the sequence.
 */
import { describe, expect, it } from "vitest";
import { DiskError } from "../../src/disk/Disk.js";
import {
  CompactionInterrupted,
  CorruptRecord,
  IncompleteTail,
  Locked,
  StoreNotFound,
  WriterFailed,
} from "../../src/store/StoreError.js";

const segment = "/data/epochs/00000000000000000001/segments/00000000000000000002.tay";
const eio = new DiskError({ operation: "sync", path: segment, code: "EIO", detail: "i/o error" });

describe("error messages", () => {
  it("name the reason, file, offset and sequence, as the CLI's line does", () => {
    const corrupt = new CorruptRecord({
      path: segment,
      offset: 4096,
      sequence: 17,
      reason: "RecordChecksum",
    });
    expect(corrupt.message).toMatch(
      /^RecordChecksum \/data\/epochs\/.*\.tay at offset 4096 sequence 17: /,
    );
    expect(String(corrupt)).toContain("at offset 4096 sequence 17");
    const torn = new IncompleteTail({ path: segment, offset: 80, sequence: 3, part: "Record" });
    expect(torn.message).toMatch(/^IncompleteTail .*\.tay at offset 80 sequence 3: /);
  });

  it("say what the refusal is for errors without an offset", () => {
    expect(new StoreNotFound({ path: "/nope", reason: "MissingDirectory" }).message).toBe(
      "StoreNotFound /nope: no such directory",
    );
    expect(new Locked({ path: "/data/LOCK", holder: null }).message).toMatch(
      /^Locked \/data\/LOCK: /,
    );
    expect(new WriterFailed({ cause: eio }).message).toContain("EIO");
    expect(new CompactionInterrupted({ cause: eio }).message).toContain("EIO");
  });
});
