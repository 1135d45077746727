// Proves the base-segment writer lays out the same files however its records arrive: written in one
// call (compaction) or page by page in pages of any sizes (the import of a generation), with a
// rotation target small enough that segments end inside a page and a write chunk smaller than a
// page, the segment files and the segment states are the same, byte for byte (the import's store
// is then recovered whole by Import.test.ts and CliCopy.test.ts). Real temporary directories.
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { describe, expect, it } from "@effect/vitest";
import { Effect, Either } from "effect";
import * as Batch from "../../../src/log/Batch.js";
import * as Layout from "../../../src/store/Layout.js";
import {
  BaseSegments,
  type BaseTarget,
  writeBaseSegments,
} from "../../../src/store/internal/baseSegments.js";
import { inserted, nodeDisk, temporaryDirectory } from "../../support/store.js";

const storeId = Uint8Array.from({ length: 16 }, (_, index) => index + 1);

/** 300 records of varied sizes from sequence 11. */
const records = () => {
  const prepared = Either.getOrThrow(
    Batch.prepare(
      Array.from({ length: 300 }, (_, index) => inserted(index + 1, (index * 37) % 500)),
    ),
  ).records;
  for (const [index, record] of prepared.entries()) record.sequence = 11 + index;
  return prepared;
};

/** Every segment file of the target's generation, by name. */
const files = (target: BaseTarget) =>
  Effect.promise(async () => {
    const directory = Layout.segmentsPath(target.directory, target.epoch);
    const names = (await fs.readdir(directory)).sort();
    return Promise.all(
      names.map(async (name) => [name, await fs.readFile(path.join(directory, name))] as const),
    );
  });

const targetIn = (directory: string): BaseTarget => ({
  directory,
  epoch: 1,
  storeId,
  rotationTargetBytes: 9_000,
  writeBytesMax: 2_000,
});

describe("BaseSegments", () => {
  it.scopedLive("pages of any sizes write the same files as one call", () =>
    Effect.gen(function* () {
      const all = records();
      const whole = targetIn(yield* temporaryDirectory);
      yield* Effect.promise(() =>
        fs.mkdir(Layout.segmentsPath(whole.directory, 1), { recursive: true }),
      );
      const written = yield* writeBaseSegments(whole, all);
      expect(written.length).toBeGreaterThan(3);
      const expected = yield* files(whole);
      for (const pageSize of [1, 7, 64, 299]) {
        const paged = targetIn(yield* temporaryDirectory);
        yield* Effect.promise(() =>
          fs.mkdir(Layout.segmentsPath(paged.directory, 1), { recursive: true }),
        );
        const segments = new BaseSegments(paged);
        for (let start = 0; start < all.length; start += pageSize) {
          yield* segments.write(all.slice(start, start + pageSize));
        }
        const sealed = yield* segments.seal();
        expect(
          sealed.map((segment) => [segment.firstSequence, segment.recordCount, segment.size]),
        ).toEqual(
          written.map((segment) => [segment.firstSequence, segment.recordCount, segment.size]),
        );
        const found = yield* files(paged);
        expect(found.map(([name]) => name)).toEqual(expected.map(([name]) => name));
        for (const [index, [name, bytes]] of found.entries()) {
          expect(
            bytes.equals(expected[index]?.[1] ?? Buffer.alloc(0)),
            `${pageSize}: ${name}`,
          ).toBe(true);
        }
      }
    }).pipe(Effect.provide(nodeDisk)),
  );
});
