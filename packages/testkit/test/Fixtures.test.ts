// Proves the committed fixture stores are intact and still mean what they meant: SHA256SUMS and
// DIRECTORIES match the files, each valid fixture opens (on a private copy) to the exact state
// facts written below and each refusal fails with the exact error and fields. It also regenerates
// every fixture now and requires the same bytes, so a drift of the writer or the codec is caught.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Query } from "@tay/core";
import { Engine, NodeDisk, Recovery } from "@tay/shell-node";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as FaultDisk from "../../shell-node/src/disk/FaultDisk.js";
import * as Fixtures from "../src/Fixtures.js";

const root = fileURLToPath(new URL("./fixtures/stores/", import.meta.url));

const readLines = (name: string): Array<string> =>
  readFileSync(path.join(root, name), "utf8")
    .split("\n")
    .filter((line) => line.length > 0);

const sums = readLines(Fixtures.sumsFileName).map((line) => {
  const match = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
  if (match === null) throw new Error(`malformed SHA256SUMS line ${JSON.stringify(line)}`);
  return { sum: match[1] ?? "", file: match[2] ?? "" };
});
const directories = readLines(Fixtures.directoriesFileName);

/** Every file under the committed root, relative, the two listings excluded. */
const committedFiles = (): Array<string> => {
  const found: Array<string> = [];
  const walk = (relative: string) => {
    for (const name of readdirSync(path.join(root, relative))) {
      const child = relative === "" ? name : `${relative}/${name}`;
      if (statSync(path.join(root, child)).isDirectory()) walk(child);
      else found.push(child);
    }
  };
  walk("");
  return found
    .filter((file) => file !== Fixtures.sumsFileName && file !== Fixtures.directoriesFileName)
    .sort();
};

describe("the committed fixtures", () => {
  it("SHA256SUMS lists exactly the files, and every sum matches", () => {
    expect(sums.map(({ file }) => file)).toEqual(committedFiles());
    expect(sums.length).toBe(66);
    for (const { sum, file } of sums) {
      const actual = createHash("sha256")
        .update(readFileSync(path.join(root, file)))
        .digest("hex");
      expect({ file, sum: actual }).toEqual({ file, sum });
    }
  });

  it("DIRECTORIES lists every directory, the empty ones git does not keep included", () => {
    const parents = new Set(
      sums.flatMap(({ file }) => {
        const parts = file.split("/").slice(0, -1);
        return parts.map((_, index) => `${parts.slice(0, index + 1).join("/")}/`);
      }),
    );
    for (const parent of parents) expect(directories).toContain(parent);
    expect(directories).toEqual([...directories].sort());
    // The empty ones: the empty store's segments/ and the Store-v1 root's segments/.
    expect(directories.filter((directory) => !parents.has(directory))).toEqual([
      "empty/epochs/00000000000000000001/segments/",
      "refused-store-v1/segments/",
    ]);
  });

  it("are byte for byte what the generator writes now", async () => {
    const disk = FaultDisk.make();
    const tree = await Effect.runPromise(
      Effect.provide(Fixtures.writeAll("/fixtures"), FaultDisk.layer(disk)),
    );
    expect(tree.directories).toEqual(directories);
    const generated = disk.snapshotFiles();
    const expected = new Map(
      [...committedFiles(), Fixtures.sumsFileName, Fixtures.directoriesFileName].map((file) => [
        `/fixtures/${file}`,
        Uint8Array.from(readFileSync(path.join(root, file))),
      ]),
    );
    expect([...generated.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [file, bytes] of expected) {
      // One file at a time, so a drift names its file.
      expect({ file, bytes: generated.get(file) }).toEqual({ file, bytes });
    }
  });
});

let scratch = "";
beforeAll(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "tay-fixtures-"));
});
afterAll(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
});

/** A private copy of a committed fixture (open writes LOCK: never open the committed one). */
const copyOf = async (name: Fixtures.FixtureName): Promise<string> => {
  const target = path.join(scratch, `${name}-${Math.random().toString(36).slice(2)}`);
  await Effect.runPromise(Effect.provide(Fixtures.copy(root, name, target), NodeDisk.layer));
  return target;
};

/** The facts a valid fixture must open to. */
interface Facts {
  readonly epoch: number;
  readonly parentEpoch: number;
  readonly baseRecordCount: number;
  readonly firstSequence: number;
  readonly lastSequence: number;
  readonly segments: number;
  readonly lastJobId: number;
  readonly jobs: Query.Counts;
  /** Schedule id -> [revision, cancelled, active job ids, membership complete]. */
  readonly schedules: Readonly<
    Record<string, readonly [number, boolean, ReadonlyArray<number>, boolean]>
  >;
}

const counts = (partial: Partial<Query.Counts>): Query.Counts => ({
  scheduled: 0,
  available: 0,
  executing: 0,
  retryable: 0,
  completed: 0,
  discarded: 0,
  cancelled: 0,
  ...partial,
});

const expectedFacts: ReadonlyArray<readonly [Fixtures.FixtureName, Facts]> = [
  [
    "empty",
    {
      epoch: 1,
      parentEpoch: 0,
      baseRecordCount: 0,
      firstSequence: 1,
      lastSequence: 0,
      segments: 0,
      lastJobId: 0,
      jobs: counts({}),
      schedules: {},
    },
  ],
  [
    "all-pairs",
    {
      epoch: 2,
      parentEpoch: 1,
      baseRecordCount: 4,
      firstSequence: 101,
      lastSequence: 127,
      segments: 7,
      lastJobId: 10,
      jobs: counts({
        scheduled: 1,
        available: 2,
        executing: 1,
        retryable: 1,
        completed: 3,
        discarded: 1,
        cancelled: 1,
      }),
      schedules: {
        "legacy-cleanup": [4, false, [7], false],
        nightly: [3, false, [9], true],
        "weekly-digest": [2, true, [], true],
      },
    },
  ],
  [
    "compacted",
    {
      epoch: 3,
      parentEpoch: 2,
      baseRecordCount: 7,
      firstSequence: 5001,
      lastSequence: 5012,
      segments: 6,
      lastJobId: 22,
      jobs: counts({
        scheduled: 1,
        available: 1,
        executing: 1,
        retryable: 1,
        completed: 3,
        discarded: 1,
        cancelled: 1,
      }),
      schedules: {
        "daily-report": [2, true, [], true],
        "hourly-sync": [7, false, [20], true],
      },
    },
  ],
  [
    "multi-segment",
    {
      epoch: 1,
      parentEpoch: 0,
      baseRecordCount: 0,
      firstSequence: 1,
      lastSequence: 40,
      segments: 10,
      lastJobId: 16,
      jobs: counts({
        available: 3,
        executing: 1,
        retryable: 2,
        completed: 8,
        discarded: 1,
        cancelled: 1,
      }),
      schedules: {},
    },
  ],
];

const openFacts = (directory: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      // No rescue: the state must be exactly the fold of the committed history.
      const engine = yield* Engine.open(directory, { rescueOnOpen: false });
      const state = yield* engine.state();
      const schedules = Object.fromEntries(
        (yield* engine.schedules()).map((schedule) => [
          schedule.scheduleId,
          [
            schedule.revision,
            schedule.cancelledAt !== null,
            schedule.activeJobIds,
            schedule.membershipComplete,
          ],
        ]),
      );
      const { report } = engine;
      return {
        facts: {
          epoch: report.epoch,
          parentEpoch: report.parentEpoch,
          baseRecordCount: report.baseRecordCount,
          firstSequence: report.firstSequence,
          lastSequence: report.lastSequence,
          segments: report.segments,
          lastJobId: report.lastJobId,
          jobs: Query.totals(state),
          schedules,
        },
        engine,
      };
    }),
  ).pipe(Effect.provide(NodeDisk.layer));

describe("valid fixtures open to their facts", () => {
  it.each(expectedFacts)("%s", async (name, facts) => {
    const directory = await copyOf(name);
    const opened = await Effect.runPromise(openFacts(directory));
    expect(opened.facts).toEqual(facts);
    expect(opened.engine.report.storeId).toBe("00010203-0405-0607-0809-0a0b0c0d0e0f");
  });

  it("all-pairs keeps its values exactly: results, rich args, errors", async () => {
    const directory = await copyOf("all-pairs");
    const jobs = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const engine = yield* Engine.open(directory, { rescueOnOpen: false });
          return yield* Effect.all([1, 3, 4, 6].map((jobId) => engine.job(jobId)));
        }),
      ).pipe(Effect.provide(NodeDisk.layer)),
    );
    const [first, third, fourth, sixth] = jobs;
    expect(first?.result?.value).toEqual(new Map([["sent", true]]));
    expect(third?.errors).toEqual([
      { attempt: 1, at: 1_700_000_007_000, error: "timeout after 30 s" },
    ]);
    expect(fourth?.result?.value).toEqual([1.5, "ok", 2n ** 62n]);
    const args = sixth?.args;
    const arg = (key: string) => (args instanceof Map ? args.get(key) : undefined);
    expect(arg("big")).toBe(2n ** 60n);
    expect(arg("__proto__")).toBe("inert key");
    expect(arg("bytes")).toEqual(Uint8Array.of(0, 1, 254, 255));
    expect(arg("nested")).toEqual(new Map([["depth", [[["three"]]]]]));
    expect(sixth?.errors.map((error) => error.error)).toEqual(["smtp 451: try later"]);
    expect(sixth?.attempt).toBe(2);
  });
});

const segmentsOf = (name: string) => `${name}/epochs/00000000000000000001/segments`;

const expectedRefusals: ReadonlyArray<
  readonly [Fixtures.FixtureName, Readonly<Record<string, unknown>>, string]
> = [
  [
    "refused-torn-tail",
    { _tag: "IncompleteTail", offset: 255, sequence: 8, part: "Record" },
    `${segmentsOf("refused-torn-tail")}/00000000000000000003.tay`,
  ],
  [
    "refused-bit-flip",
    { _tag: "CorruptRecord", offset: 255, sequence: 2, reason: "RecordChecksum" },
    `${segmentsOf("refused-bit-flip")}/00000000000000000001.tay`,
  ],
  [
    "refused-segment-gap",
    { _tag: "SegmentGap", expected: 2, found: 3 },
    segmentsOf("refused-segment-gap"),
  ],
  [
    "refused-foreign-segment",
    {
      _tag: "Mismatch",
      offset: 24,
      field: "StoreId",
      expected: "00010203-0405-0607-0809-0a0b0c0d0e0f",
      found: "f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff",
    },
    `${segmentsOf("refused-foreign-segment")}/00000000000000000002.tay`,
  ],
  [
    "refused-unexpected-entry",
    { _tag: "UnexpectedEntry", name: "notes.txt" },
    segmentsOf("refused-unexpected-entry"),
  ],
  ["refused-store-v1", { _tag: "UnsupportedStoreV1", found: "STORE" }, "refused-store-v1"],
];

describe("refusal fixtures fail with their exact error", () => {
  it.each(expectedRefusals)("%s", async (name, fields, pathSuffix) => {
    const directory = await copyOf(name);
    // The copy's directory name carries a random suffix: compare the path after it.
    const renamed = (found: string) => found.replace(directory, name);
    const refusal = await Effect.runPromise(
      Effect.flip(Effect.scoped(Engine.open(directory))).pipe(Effect.provide(NodeDisk.layer)),
    );
    expect(refusal).toMatchObject(fields);
    expect("path" in refusal ? renamed(String(refusal.path)) : undefined).toBe(pathSuffix);
    // Inspection (no lock, no writer) agrees.
    const inspected = await Effect.runPromise(
      Effect.flip(Recovery.inspect(directory, {}, Engine.foldProjection)).pipe(
        Effect.provide(NodeDisk.layer),
      ),
    );
    expect(inspected).toMatchObject(fields);
  });
});
