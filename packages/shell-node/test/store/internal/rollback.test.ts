// Proves the writer's rollback: after a failed write or sync the active segment is put back to the
// end of the last acknowledged submission and synced, so a rejected submission leaves no record —
// also when it is larger than a batch or reaches the rotation target — and when the rollback
// itself fails the error says the store may need the operator. Stores run on the fault disk, with
// faults aimed at one write or sync, and are reopened on the same disk and after a power loss.
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import * as FaultDisk from "../../../src/disk/FaultDisk.js";
import * as Projection from "../../../src/log/Projection.js";
import * as Init from "../../../src/store/Init.js";
import { rollBack } from "../../../src/store/internal/rollback.js";
import * as Layout from "../../../src/store/Layout.js";
import * as Store from "../../../src/store/Store.js";
import type { StoreOptionsInput } from "../../../src/store/StoreOptions.js";
import { inserted } from "../../support/store.js";

const directory = "/data";
const range = (first: number, last: number) =>
  Array.from({ length: last - first + 1 }, (_, index) => first + index);
const jobIdsOf = (entries: ReadonlyArray<{ readonly event: { readonly _tag: string } }>) =>
  entries.map((entry) => ("jobId" in entry.event ? entry.event.jobId : -1));

/** A fault disk holding an initialized store. */
const initialized = () =>
  Effect.gen(function* () {
    const disk = FaultDisk.make();
    disk.seedDirectory(directory);
    yield* Init.init(directory).pipe(Effect.provide(FaultDisk.layer(disk)));
    return disk;
  });

/** The job ids the store at `directory` on `disk` opens with. */
const reopened = (disk: FaultDisk.FaultDisk) =>
  Effect.scoped(Store.open(directory, {}, Projection.collect)).pipe(
    Effect.map(({ state }) => jobIdsOf(state)),
    Effect.provide(FaultDisk.layer(disk)),
  );

/**
 * Appends jobs 1..4 one by one, then submits `size` more as ONE submission with `fault` armed
 * from then on; returns how that submission ended.
 */
const oneLargeSubmission = (
  disk: FaultDisk.FaultDisk,
  options: StoreOptionsInput,
  size: number,
  fault: FaultDisk.Fault,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { store } = yield* Store.open(directory, options, Projection.count);
      for (const jobId of range(1, 4)) yield* store.append([inserted(jobId, 40)]);
      disk.inject(fault);
      const events = range(5, 4 + size).map((jobId) => inserted(jobId, 40));
      const outcome = yield* Effect.either(store.append(events));
      disk.clearFaults();
      return outcome;
    }),
  ).pipe(Effect.provide(FaultDisk.layer(disk)));

describe("a rejected submission leaves no record", () => {
  it.effect("when it reaches the rotation target: the batch is not cut inside it", () =>
    Effect.gen(function* () {
      // 20 records of ~230 bytes against a 600-byte target: cut at the target, the submission
      // would span segments. It is one batch; the writes after it are the rotation's.
      for (let nth = 1; nth <= 3; nth++) {
        const disk = yield* initialized();
        const outcome = yield* oneLargeSubmission(
          disk,
          { durability: "Maximal", rotationTargetBytes: 600 },
          20,
          FaultDisk.fail("write", "EIO", { path: /(\.tay|SEGMENT\.tmp)$/, nth }),
        );
        // The batch itself (nth 1) is refused and taken back whole; a failed footer (2) or
        // staged header (3) comes after the batch was durable, which resolved.
        const expected = nth === 1 ? range(1, 4) : range(1, 24);
        expect(outcome._tag).toBe(nth === 1 ? "Left" : "Right");
        expect(yield* reopened(disk)).toEqual(expected);
        expect(yield* reopened(disk.crash())).toEqual(expected);
      }
    }),
  );

  it.effect("when it is larger than writeBytesMax: it is written as one batch", () =>
    Effect.gen(function* () {
      const disk = yield* initialized();
      const outcome = yield* oneLargeSubmission(
        disk,
        { durability: "Maximal", writeBytesMax: 300 },
        12,
        FaultDisk.fail("sync", "EIO", { path: /\.tay$/ }),
      );
      expect(outcome._tag).toBe("Left");
      const writes = disk
        .operations()
        .filter((operation) => operation.kind === "write" && operation.path.endsWith(".tay"));
      // The four single appends, then the twelve records in one write of ~1.5 KB.
      expect(writes.length).toBe(5);
      expect(writes.at(-1)?.length).toBeGreaterThan(1000);
      expect(yield* reopened(disk)).toEqual(range(1, 4));
    }),
  );

  it.effect("under Segment and Throughput too (no sync: the failed write is taken back)", () =>
    Effect.gen(function* () {
      for (const durability of ["Segment", "Throughput"] as const) {
        const disk = yield* initialized();
        const outcome = yield* oneLargeSubmission(
          disk,
          { durability, rotationTargetBytes: 600 },
          20,
          FaultDisk.shortWrite(100, { path: /\.tay$/ }),
        );
        // Short writes alone complete; a short write then ENOSPC-like EIO leaves a partial batch.
        expect(outcome._tag).toBe("Right");
        const failing = yield* initialized();
        const refused = yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(directory, { durability }, Projection.count);
            for (const jobId of range(1, 4)) yield* store.append([inserted(jobId, 40)]);
            failing.inject(FaultDisk.shortWrite(100, { path: /\.tay$/ }));
            failing.inject(FaultDisk.fail("write", "EIO", { path: /\.tay$/, nth: 2 }));
            return yield* Effect.flip(store.append(range(5, 12).map((id) => inserted(id, 40))));
          }),
        ).pipe(Effect.provide(FaultDisk.layer(failing)));
        failing.clearFaults();
        expect(refused).toMatchObject({
          _tag: "WriterFailed",
          rollback: { _tag: "RolledBack" },
        });
        expect(refused.message).toContain("the segment was put back to its last acknowledged");
        expect(yield* reopened(failing)).toEqual(range(1, 4));
      }
    }),
  );
});

describe("a failed footer", () => {
  const options: StoreOptionsInput = { durability: "Maximal", rotationTargetBytes: 560 };
  const segmentOne = /0001\.tay$/;
  /** Appends jobs 1..6 one by one; the outcome of each. */
  const appendSix = (disk: FaultDisk.FaultDisk, fault?: FaultDisk.Fault) =>
    Effect.scoped(
      Effect.gen(function* () {
        const { store } = yield* Store.open(directory, options, Projection.count);
        if (fault !== undefined) disk.inject(fault);
        const outcomes: Array<string> = [];
        for (const jobId of range(1, 6)) {
          outcomes.push((yield* Effect.either(store.append([inserted(jobId, 40)])))._tag);
        }
        return outcomes;
      }),
    ).pipe(Effect.provide(FaultDisk.layer(disk)));

  it.effect("is taken back: the segment is active again and the store opens", () =>
    Effect.gen(function* () {
      // Where the footer of segment 1 is written: the first 64-byte write to it.
      const probe = yield* initialized();
      yield* appendSix(probe);
      const writes = probe
        .operations()
        .filter((operation) => operation.kind === "write" && segmentOne.test(operation.path));
      const footerAt = writes.findIndex((operation) => operation.length === 64) + 1;
      expect(footerAt).toBeGreaterThan(1);
      const sealedRecords = footerAt - 1;
      for (const fault of [
        FaultDisk.fail("write", "EIO", { path: segmentOne, nth: footerAt }),
        // An O_DSYNC write is a write then a sync: the same nth strikes its sync.
        FaultDisk.fail("sync", "EIO", { path: segmentOne, nth: footerAt }),
        FaultDisk.loseDirtyPages({ path: segmentOne, nth: footerAt }),
      ]) {
        const disk = yield* initialized();
        const outcomes = yield* appendSix(disk, fault);
        disk.clearFaults();
        // The append whose batch reached the target was durable before its footer failed: it
        // resolved; the writer stopped after it.
        expect(outcomes).toEqual([
          ...range(1, sealedRecords).map(() => "Right"),
          ...range(sealedRecords + 1, 6).map(() => "Left"),
        ]);
        // Reopened by the same process: without its footer segment 1 is the active one again, so
        // no segment 2 is built on a footer whose sync failed (a power loss later would take
        // that footer and leave segment 1 without one under segment 2: MissingFooter).
        expect(yield* reopened(disk)).toEqual(range(1, sealedRecords));
        expect(disk.listing()).not.toContain(Layout.segmentPath(directory, 1, 2));
        const survivor = disk.crash();
        expect(yield* reopened(survivor)).toEqual(range(1, sealedRecords));
      }
    }),
  );
});

describe("rollBack", () => {
  it.effect("truncates to the acknowledged size and syncs; never extends a shorter file", () =>
    Effect.gen(function* () {
      const disk = FaultDisk.make();
      disk.seedFile("/f", new TextEncoder().encode("acknowledged+rejected"));
      const handle = yield* disk.open("/f", "readWrite");
      expect(yield* rollBack(handle, 12)).toEqual({ _tag: "RolledBack", path: "/f", size: 12 });
      expect(disk.crash().snapshotFiles().get("/f")).toEqual(
        new TextEncoder().encode("acknowledged"),
      );
      const shorter = FaultDisk.make();
      shorter.seedFile("/f", new TextEncoder().encode("ack"));
      const short = yield* shorter.open("/f", "readWrite");
      const outcome = yield* rollBack(short, 12);
      expect(outcome).toMatchObject({
        _tag: "RollbackFailed",
        cause: { operation: "truncate", code: "EIO" },
      });
      expect(shorter.snapshotFiles().get("/f")).toEqual(new TextEncoder().encode("ack"));
    }),
  );

  it.effect("reports a failed truncate or sync as RollbackFailed", () =>
    Effect.gen(function* () {
      for (const fault of [FaultDisk.fail("truncate", "EIO"), FaultDisk.fail("sync", "EIO")]) {
        const disk = FaultDisk.make({ faults: [fault] });
        disk.seedFile("/f", new TextEncoder().encode("acknowledged+rejected"));
        const handle = yield* disk.open("/f", "readWrite");
        expect(yield* rollBack(handle, 12)).toMatchObject({
          _tag: "RollbackFailed",
          size: 12,
          cause: { code: "EIO" },
        });
      }
    }),
  );
});
