// `tay copy-prefix` repairs a damaged store by copying its longest valid
// prefix into a new store: the copy verifies, folds to exactly the prefix's
// state, and the report names what was left out, while the source stays
// byte-identical (a hash of its whole tree before and after). Stores are
// damaged with real bytes (truncation, bit flips) or given a record the
// fold refuses (a leftover SEGMENT.tmp beside them is ignored); refusals (target not empty, source locked, a fault outside
// the segments or inside the base) are checked through `CopyPrefix` and
// the one-line error mapping.
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { Event } from "@tay/core";
import { Effect, Exit, Scope } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CopyPrefix, type Disk, Engine, Init, NodeDisk, Projection } from "@tay/shell-node";
// The raw store (not public API) writes a record the fold refuses, on purpose.
import * as Store from "../../shell-node/src/store/Store.js";
import {
  expectFailure,
  flipBit,
  hashTree,
  json,
  lastSegment,
  ok,
  recordOffsets,
  removeTemporary,
  requireBuild,
  tay,
  temporaryDirectory,
  truncateBy,
} from "./support/cli.js";

let root = "";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const run = <A, E>(effect: Effect.Effect<A, E, Disk.Disk>) =>
  Effect.runPromise(Effect.either(Effect.provide(effect, NodeDisk.layer)));

/** A store of `count` jobs inserted one by one through the engine, in this process. */
const storeWithJobs = async (name: string, count: number): Promise<string> => {
  const directory = path.join(root, name);
  const made = await run(
    Effect.scoped(
      Effect.gen(function* () {
        yield* Init.init(directory);
        const engine = yield* Engine.open(directory);
        for (let index = 0; index < count; index++) {
          yield* engine.insert({ queue: "q", worker: "w", args: index });
        }
      }),
    ),
  );
  expect(made._tag).toBe("Right");
  return directory;
};

beforeAll(async () => {
  requireBuild();
  root = await temporaryDirectory();
});

afterAll(async () => {
  await removeTemporary(root);
});

describe("copy-prefix", () => {
  it("ignores a leftover SEGMENT.tmp in the source, as open does, and copies none", async () => {
    const source = await storeWithJobs("staged", 3);
    const staged = path.join(source, "epochs", "00000000000000000001", "SEGMENT.tmp");
    await fs.writeFile(staged, "an interrupted segment creation");
    const segment = await lastSegment(source);
    await truncateBy(segment, 5);
    const before = await hashTree(source);
    const target = path.join(root, "staged.copy");
    const copied = await run(CopyPrefix.copyPrefix(source, target));
    expect(copied._tag).toBe("Right");
    if (copied._tag === "Right") {
      expect(copied.right.copied.records).toBe(2);
      expect(copied.right.leftOut).toMatchObject({ path: segment, records: 1 });
      expect(copied.right.target.stagedSegment).toBeNull();
    }
    // The source, staging file included, is left exactly as it was.
    expect(await hashTree(source)).toBe(before);
    // A new store: its one generation (epoch 1) holds the prefix's base.
    expect(await fs.readdir(path.join(target, "epochs"))).toEqual(["00000000000000000001"]);
    expect(await fs.readdir(path.join(target, "epochs", "00000000000000000001"))).toEqual([
      "MANIFEST",
      "segments",
    ]);
  });

  it("repairs a torn tail: the copy verifies, holds the prefix, and SRC is unchanged", async () => {
    const source = path.join(root, "torn");
    await ok(["init", source]);
    await ok(["insert", source, "--queue", "q", "--worker", "w", "--args", '{"n":1}']);
    await ok(["schedule", source, "--id", "s", "--queue", "q", "--worker", "w", "--every", "1h"]);
    const prefixJobs = await json(["jobs", source]);
    await ok(["insert", source, "--queue", "q", "--worker", "w", "--args", '{"n":2}']);
    const segment = await lastSegment(source);
    const tornAt = (await recordOffsets(segment)).at(-1) ?? 0;
    await truncateBy(segment, 5);
    const { size } = await fs.stat(segment);
    expectFailure(await tay(["verify", source]), "IncompleteTail");

    const before = await hashTree(source);
    const target = path.join(root, "torn.copy");
    const report = await json(["copy-prefix", source, target]);
    expect(await hashTree(source)).toBe(before);
    expect(report).toMatchObject({
      copied: { records: 2, first_sequence: 1, last_sequence: 2, jobs: 1, schedules: 1 },
      left_out: {
        reason: "IncompleteTail",
        path: segment,
        offset: tornAt,
        sequence: 3,
        records: 1,
        bytes: size - tornAt,
        files: [],
      },
      target: { path: target, epoch: 1, verified: true },
    });
    // Staged beside the target and renamed onto it: no staging directory is left.
    expect((await fs.readdir(root)).filter((name) => name.includes("tay-copy"))).toEqual([]);

    expect(await json(["verify", target])).toMatchObject({ valid: true, jobs: 1, schedules: 1 });
    expect(await json(["jobs", target])).toEqual(prefixJobs);
    // The copy is a working store: the torn insert's job id is free again.
    expect(
      await json(["insert", target, "--queue", "q", "--worker", "w", "--args", "null"]),
    ).toMatchObject({ job_id: 2 });
  });

  it("repairs a flipped bit: records before it are kept, the rest cannot be counted", async () => {
    const source = await storeWithJobs("flipped", 5);
    const segment = await lastSegment(source);
    const offsets = await recordOffsets(segment);
    const third = offsets[2] ?? 0;
    await flipBit(segment, third + 24 + 3, 4);
    const before = await hashTree(source);
    const target = path.join(root, "flipped.copy");
    const text = await ok(["copy-prefix", source, target]);
    expect(await hashTree(source)).toBe(before);
    expect(text).toContain(`left out: ${segment} from offset ${third} (sequence 3 on)`);
    expect(text).toContain("an unknown number of records");
    expect(text).toMatch(/^reason: +RecordChecksum: /m);
    const copied = await json(["jobs", target]);
    expect(Array.isArray(copied) && copied.map((job) => (isObject(job) ? job.args : null))).toEqual(
      [0, 1],
    );
    await ok(["verify", target]);
  });

  it("leaves out a record the fold refuses, and every record after it, counted", async () => {
    const source = await storeWithJobs("refused", 2);
    // The store appends what it is given: a start of a job that never existed, then more.
    const appended = await run(
      Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(source, {}, Projection.count);
          yield* store.append([Event.jobStarted({ jobId: 99, at: 1, attempt: 1 })]);
          yield* store.append([Event.jobAvailable({ jobId: 1, at: 2 })]);
        }),
      ),
    );
    expect(appended._tag).toBe("Right");
    const segment = await lastSegment(source);
    const refusedAt = (await recordOffsets(segment))[2] ?? 0;
    const refused = await tay(["verify", source]);
    expect(expectFailure(refused, "UnknownJob")).toMatch(
      new RegExp(
        `^tay: UnknownJob ${segment} at offset ${refusedAt} sequence 3: the fold refuses JobStarted`,
      ),
    );

    const before = await hashTree(source);
    const target = path.join(root, "refused.copy");
    const report = await json(["copy-prefix", source, target]);
    expect(await hashTree(source)).toBe(before);
    expect(report).toMatchObject({
      copied: { records: 2, last_sequence: 2, jobs: 2 },
      left_out: { reason: "UnknownJob", path: segment, offset: refusedAt, sequence: 3, records: 2 },
    });
    await ok(["verify", target]);
  });

  it("refuses a target that is not empty, and leaves both alone", async () => {
    const source = await storeWithJobs("busy-target", 1);
    const target = path.join(root, "occupied");
    await fs.mkdir(target);
    await fs.writeFile(path.join(target, "keep.txt"), "mine");
    const before = await hashTree(source);
    const line = expectFailure(await tay(["copy-prefix", source, target]), "NotEmpty");
    expect(line).toContain(`tay: NotEmpty ${target}: the directory is not empty (found keep.txt)`);
    expect(await hashTree(source)).toBe(before);
    expect(await fs.readdir(target)).toEqual(["keep.txt"]);
  });

  it("refuses a source another process writes to (Locked)", async () => {
    const source = await storeWithJobs("locked", 1);
    const scope = Effect.runSync(Scope.make());
    await Effect.runPromise(
      Engine.open(source).pipe(Scope.extend(scope), Effect.provide(NodeDisk.layer)),
    );
    try {
      const copied = await run(CopyPrefix.copyPrefix(source, path.join(root, "locked.copy")));
      expect(copied._tag === "Left" && copied.left._tag).toBe("Locked");
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void));
    }
  });

  it("refuses a fault outside the segment files, naming it", async () => {
    const source = await storeWithJobs("bad-current", 1);
    await flipBit(path.join(source, "CURRENT"), 30);
    const target = path.join(root, "bad-current.copy");
    const copied = await run(CopyPrefix.copyPrefix(source, target));
    expect(copied._tag).toBe("Left");
    if (copied._tag === "Left") {
      expect(copied.left._tag).toBe("PrefixUnavailable");
      expect(copied.left.message).toMatch(
        new RegExp(
          `^ChecksumMismatch ${path.join(source, "CURRENT")} at offset 32: .*; copy-prefix repairs faults inside segment files only$`,
        ),
      );
    }
    await expect(fs.stat(target)).rejects.toThrow();
  });

  it("refuses when the fault lies inside the canonical base", async () => {
    const source = await storeWithJobs("bad-base", 3);
    const compacted = await run(
      Effect.scoped(
        Effect.flatMap(Engine.open(source), (engine) => engine.compact(Number.MAX_SAFE_INTEGER)),
      ),
    );
    expect(compacted._tag).toBe("Right");
    const base = path.join(source, "epochs", "00000000000000000002", "segments");
    const [first = ""] = (await fs.readdir(base)).sort();
    // The first base record's payload: part 0 of the snapshot.
    await flipBit(path.join(base, first), 44 + 24 + 2);
    const copied = await run(CopyPrefix.copyPrefix(source, path.join(root, "bad-base.copy")));
    expect(copied._tag === "Left" && copied.left._tag).toBe("PrefixUnavailable");
    if (copied._tag === "Left") {
      expect(copied.left.message).toMatch(
        /^RecordChecksum .* at offset 44 sequence 4: .*inside the canonical base \(0 of 1 base records are valid\)/,
      );
    }
  });
});
