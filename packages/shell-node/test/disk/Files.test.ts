// Proves the small file idioms' loops end: `writeAll` goes on after short writes until every byte
// is written, and fails rather than spins on a write that makes no progress (a Disk whose write
// reports 0 bytes would otherwise loop forever).
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Files from "../../src/disk/Files.js";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe("Files.writeAll", () => {
  it.effect("writes every byte through short writes", () =>
    Effect.gen(function* () {
      const disk = FaultDisk.make({ faults: [FaultDisk.shortWrite(3)] });
      disk.seedDirectory("/data");
      const handle = yield* disk.open("/data/file", "createExclusive");
      yield* Files.writeAll(handle, 2, bytes("abcdefgh"));
      expect(new TextDecoder().decode(yield* handle.read(0, 64))).toBe("\0\0abcdefgh");
    }),
  );

  it.effect("fails with EIO on a write that reports no byte written", () =>
    Effect.gen(function* () {
      const disk = FaultDisk.make();
      disk.seedDirectory("/data");
      const handle = yield* disk.open("/data/file", "createExclusive");
      let writes = 0;
      // A second call would mean the loop went on: it dies, so the test fails at once.
      const stalled = {
        ...handle,
        write: () => {
          writes += 1;
          return writes === 1 ? Effect.succeed(0) : Effect.dieMessage("written again");
        },
      };
      const error = yield* Effect.flip(Files.writeAll(stalled, 0, bytes("abc")));
      expect(error.code).toBe("EIO");
      expect(error.detail).toBe("write made no progress");
      expect(writes).toBe(1);
    }),
  );
});
