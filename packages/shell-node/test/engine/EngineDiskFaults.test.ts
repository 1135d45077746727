// Proves that a failing or full disk never needs a repair: an insert workload on the fault disk is
// struck with EIO at every write and at every sync of the segment files in turn (and with
// fsyncgate's lost dirty pages), and run against every capacity of a small disk; after the typed
// WriterFailed, the store reopens without IncompleteTail holding exactly the acknowledged inserts,
// and the rejected one is absent. A real tmpfs of 4 MiB is filled through the engine the same way.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "@effect/vitest";
import { State } from "@tay/core";
import { Effect, Either } from "effect";
import { Disk } from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import type { DurabilityPolicy } from "../../src/store/StoreOptions.js";

const directory = "/data";
const inserts = 14;
/** Segment files and the staging file: every write and sync the writer makes. */
const segmentFiles = /(\.tay|SEGMENT\.tmp)$/;

/** What one run of the workload saw. */
interface Outcome {
  /** Job ids whose insert resolved, in order. */
  readonly acknowledged: ReadonlyArray<number>;
  /** The insert that was refused (its tag and the writer's error), if one was. */
  readonly refusal:
    | { readonly _tag: string; readonly message: string; readonly error: unknown }
    | undefined;
}

/**
 * Opens the engine and inserts until `inserts` jobs or the first refusal, from `inserters`
 * fibers (several make drains of several inserts: submissions of several records).
 */
const insertWorkload = (durability: DurabilityPolicy, argsBytes: number, inserters = 1) =>
  Effect.scoped(
    Effect.gen(function* () {
      const acknowledged: Array<number> = [];
      let refusal: Outcome["refusal"];
      const refuse = (error: { readonly _tag: string; readonly message: string }) => {
        refusal ??= { _tag: error._tag, message: error.message, error };
      };
      const opened = yield* Effect.either(
        Engine.open(directory, { durability, rotationTargetBytes: 400 }),
      );
      // A fault in activation (creating segment 1) refuses the open itself.
      if (Either.isLeft(opened)) {
        refuse(opened.left);
        return { acknowledged, refusal } satisfies Outcome;
      }
      const engine = opened.right;
      let started = 0;
      const inserter = Effect.gen(function* () {
        while (refusal === undefined && started < inserts) {
          started += 1;
          const inserted = yield* Effect.either(
            engine.insert({ queue: "q", worker: "w", args: "x".repeat(argsBytes) }),
          );
          if (Either.isLeft(inserted)) return refuse(inserted.left);
          acknowledged.push(inserted.right.jobId);
        }
      });
      yield* Effect.all(
        Array.from({ length: inserters }, () => inserter),
        { concurrency: "unbounded" },
      );
      acknowledged.sort((left, right) => left - right);
      return { acknowledged, refusal } satisfies Outcome;
    }),
  );

/**
 * Reopens and requires exactly `acknowledged`: jobs 1..k and nothing else; then, unless the disk
 * is still to be crashed, that inserts work again.
 */
const reopensWithExactly = (acknowledged: ReadonlyArray<number>, insertAfter = true) =>
  Effect.scoped(
    Effect.gen(function* () {
      const engine = yield* Engine.open(directory, { rescueOnOpen: false });
      const state = yield* engine.state();
      expect(acknowledged).toEqual(Array.from({ length: acknowledged.length }, (_, i) => i + 1));
      expect(State.jobCount(state)).toBe(acknowledged.length);
      expect(state.lastJobId).toBe(acknowledged.length);
      if (!insertAfter) return;
      // Writes resume after the reopen.
      const next = yield* engine.insert({ queue: "q", worker: "w", args: null });
      expect(next.jobId).toBe(acknowledged.length + 1);
    }),
  );

const provided = <A, X>(disk: FaultDisk.FaultDisk, effect: Effect.Effect<A, X, Disk>) =>
  Effect.provide(effect, FaultDisk.layer(disk));

/** A fresh fault disk holding an initialized store. */
const initialized = (options: FaultDisk.Options = {}) =>
  Effect.gen(function* () {
    const disk = FaultDisk.make(options);
    disk.seedDirectory(directory);
    yield* provided(disk, Init.init(directory));
    return disk;
  });

/** How many writes and syncs of segment files the unfaulted workload makes. */
const countOperations = (durability: DurabilityPolicy) =>
  Effect.gen(function* () {
    const disk = yield* initialized();
    const before = disk.operations().length;
    const outcome = yield* provided(disk, insertWorkload(durability, 40));
    expect(outcome.refusal).toBeUndefined();
    const operations = disk.operations().slice(before);
    const count = (kind: string) =>
      operations.filter((operation) => operation.kind === kind && segmentFiles.test(operation.path))
        .length;
    return { writes: count("write"), syncs: count("sync") };
  });

/** Runs the workload with `fault` armed, then checks the refusal and the reopened store. */
const strike = (durability: DurabilityPolicy, fault: FaultDisk.Fault) =>
  Effect.gen(function* () {
    const disk = yield* initialized();
    disk.inject(fault);
    const outcome = yield* provided(disk, insertWorkload(durability, 40));
    disk.clearFaults();
    if (outcome.refusal !== undefined) {
      // A typed refusal: of an insert (the writer stopped), or of the open when activation failed.
      expect(outcome.refusal._tag).toBe(
        outcome.refusal.message.includes("SEGMENT.tmp") && outcome.acknowledged.length === 0
          ? outcome.refusal._tag
          : "WriterFailed",
      );
      expect(["WriterFailed", "DiskError"]).toContain(outcome.refusal._tag);
      expect(outcome.refusal.message).toMatch(/EIO/);
      expect(outcome.refusal.message).not.toContain("may need the operator");
    }
    // The same disk, as the process that saw the failure finds it on reopening...
    yield* provided(disk, reopensWithExactly(outcome.acknowledged, durability !== "Maximal"));
    // ...and after a power loss: Maximal made every acknowledged insert, and the rollback, durable.
    if (durability === "Maximal") {
      const survivor = disk.crash();
      yield* provided(survivor, reopensWithExactly(outcome.acknowledged));
    }
    return outcome.refusal === undefined ? "completed" : "refused";
  });

describe("EIO at every write and every sync of the segment files", () => {
  for (const durability of ["Maximal", "Segment", "Throughput"] as const) {
    it.effect(`${durability}: each struck operation leaves exactly the acknowledged inserts`, () =>
      Effect.gen(function* () {
        const { writes, syncs } = yield* countOperations(durability);
        expect(writes).toBeGreaterThan(inserts);
        const tally = { completed: 0, refused: 0 };
        const faults: Array<FaultDisk.Fault> = [];
        for (let nth = 1; nth <= writes; nth++) {
          faults.push(FaultDisk.fail("write", "EIO", { path: segmentFiles, nth }));
        }
        for (let nth = 1; nth <= syncs; nth++) {
          faults.push(FaultDisk.fail("sync", "EIO", { path: segmentFiles, nth }));
          if (durability === "Maximal") {
            // fsyncgate: the failed sync also drops the dirty pages.
            faults.push(FaultDisk.loseDirtyPages({ path: segmentFiles, nth }));
          }
        }
        for (const fault of faults) tally[yield* strike(durability, fault)] += 1;
        // Most struck operations refuse an insert (or the open); a sync at close refuses none.
        expect(tally.refused).toBeGreaterThan(faults.length / 2);
        console.log(
          `EIO sweep (${durability}): ${writes} writes and ${syncs} syncs struck one at a time, ${faults.length} runs (${tally.refused} refused an insert or the open), every store reopened with exactly its acknowledged inserts`,
        );
      }),
    );
  }

  it.effect("when the rollback fails too, the error says the store may need the operator", () =>
    Effect.gen(function* () {
      const disk = yield* initialized();
      const syncs = (yield* countOperations("Maximal")).syncs;
      expect(syncs).toBeGreaterThan(4);
      // The fourth sync fails, and so does the truncate that would take its batch back.
      disk.inject(FaultDisk.fail("sync", "EIO", { path: segmentFiles, nth: 4 }));
      disk.inject(FaultDisk.fail("truncate", "EIO"));
      const outcome = yield* provided(disk, insertWorkload("Maximal", 40));
      expect(outcome.refusal?.message).toMatch(
        /^WriterFailed \/data\/.*: the writer stopped: (write|sync) .* failed with EIO .*putting the segment back to its last acknowledged \d+ bytes failed too \(truncate EIO: .*the store may need the operator; tay copy-prefix/,
      );
      expect(outcome.refusal?.error).toMatchObject({
        rollback: { _tag: "RollbackFailed", cause: { operation: "truncate" } },
      });
    }),
  );
});

describe("a full fault disk at every capacity", () => {
  for (const inserters of [1, 4]) {
    it.effect(
      `ENOSPC anywhere (${inserters} inserter(s)) leaves a store that reopens, once space is freed, with the acknowledged`,
      () =>
        Effect.gen(function* () {
          const fillerBytes = 4096;
          // The bytes an initialized store and an opened engine take, and a whole workload's.
          const opened = yield* initialized();
          yield* provided(opened, Effect.scoped(Engine.open(directory, {})));
          const usedBytes = (disk: FaultDisk.FaultDisk) =>
            [...disk.snapshotFiles().values()].reduce((sum, bytes) => sum + bytes.length, 0);
          const floor = usedBytes(opened);
          const whole = yield* initialized();
          yield* provided(whole, insertWorkload("Maximal", 40, inserters));
          const ceiling = usedBytes(whole);
          const tally = { refused: 0, completed: 0 };
          const step = inserters === 1 ? 13 : 17;
          for (let capacity = floor + 1; capacity <= ceiling + 64; capacity += step) {
            const disk = yield* initialized({ capacityBytes: capacity + fillerBytes });
            // Written beside the store before the workload, removed to free space after it.
            disk.seedFile("/filler", new Uint8Array(fillerBytes));
            const outcome = yield* provided(disk, insertWorkload("Maximal", 40, inserters));
            if (outcome.refusal === undefined) {
              tally.completed += 1;
            } else {
              tally.refused += 1;
              expect(outcome.refusal._tag).toBe("WriterFailed");
              expect(outcome.refusal.message).toMatch(/^WriterFailed .* ENOSPC/);
              // Taken back (a batch or a footer), or nothing to take back (the staged header).
              expect(outcome.refusal.message).not.toContain("may need the operator");
            }
            yield* provided(
              disk,
              Effect.flatMap(Disk, (service) => service.remove("/filler")),
            );
            yield* provided(disk, reopensWithExactly(outcome.acknowledged));
          }
          expect(tally.refused).toBeGreaterThan(100);
          console.log(
            `capacity sweep (${inserters} inserter(s)): ${tally.refused + tally.completed} capacities from ${floor + 1} to ${ceiling + 64} bytes, ${tally.refused} refused with ENOSPC, all reopened with exactly the acknowledged inserts`,
          );
        }),
    );
  }
});

/** Mounts a tmpfs of `size` on `target`; the reason when it cannot (not root, no mount, refused). */
const mountTmpfs = (target: string, size: string): string | undefined => {
  if (process.platform !== "linux") return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return "not running as root";
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", target], {
      stdio: "pipe",
    });
    return undefined;
  } catch (error) {
    return `mount -t tmpfs failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`;
  }
};

describe("a real full disk (a 4 MiB tmpfs)", () => {
  it("inserts until ENOSPC, then once space is freed the store opens with exactly the acknowledged", async (context) => {
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "tay-full-disk-"));
    const mountPoint = path.join(scratch, "mnt");
    await fs.mkdir(mountPoint);
    const refusedMount = mountTmpfs(mountPoint, "4m");
    try {
      if (refusedMount !== undefined) {
        await fs.rm(scratch, { recursive: true, force: true });
        context.skip(`no tmpfs to fill: ${refusedMount}`);
      }
      const filler = path.join(mountPoint, "filler");
      await fs.writeFile(filler, Buffer.alloc(1024 * 1024, 1));
      const data = path.join(mountPoint, "data");
      const run = <A, X>(effect: Effect.Effect<A, X, Disk>) =>
        Effect.runPromise(Effect.provide(effect, NodeDisk.layer));
      await run(Init.init(data));
      const args = "a".repeat(24 * 1024);
      const outcome = await run(
        Effect.scoped(
          Effect.gen(function* () {
            const engine = yield* Engine.open(data, {
              durability: "Maximal",
              rotationTargetBytes: 256 * 1024,
            });
            const acknowledged: Array<number> = [];
            const refusals: Array<unknown> = [];
            // Eight inserters, so batches are in flight together when the disk fills.
            const inserter = Effect.gen(function* () {
              for (;;) {
                const inserted = yield* Effect.either(
                  engine.insert({ queue: "q", worker: "w", args }),
                );
                if (Either.isLeft(inserted)) {
                  refusals.push(inserted.left);
                  return;
                }
                acknowledged.push(inserted.right.jobId);
              }
            });
            yield* Effect.all(
              Array.from({ length: 8 }, () => inserter),
              { concurrency: "unbounded" },
            );
            return { acknowledged, refusals };
          }),
        ),
      );
      expect(outcome.acknowledged.length).toBeGreaterThan(20);
      // The typed failure: the writer stopped on ENOSPC and took the failed batch back.
      const first = outcome.refusals[0];
      expect(first).toMatchObject({ _tag: "WriterFailed" });
      const failures = outcome.refusals.map((refusal) =>
        refusal instanceof Error ? refusal.message : String(refusal),
      );
      expect(failures.some((message) => /ENOSPC/.test(message))).toBe(true);
      for (const message of failures) expect(message).not.toContain("may need the operator");
      // Free space (the filler written beside the store), then reopen: no repair, exactly the
      // acknowledged jobs, and the store takes writes again.
      await fs.rm(filler);
      const reopened = await run(
        Effect.scoped(
          Effect.gen(function* () {
            const engine = yield* Engine.open(data, { rescueOnOpen: false });
            const state = yield* engine.state();
            const next = yield* engine.insert({ queue: "q", worker: "w", args: null });
            return {
              jobs: State.jobCount(state),
              lastJobId: state.lastJobId,
              missing: outcome.acknowledged.filter(
                (jobId) => State.job(state, jobId) === undefined,
              ),
              next: next.jobId,
              segments: engine.report.segments,
            };
          }),
        ),
      );
      expect(reopened.missing).toEqual([]);
      expect(reopened.jobs).toBe(outcome.acknowledged.length);
      expect(reopened.lastJobId).toBe(outcome.acknowledged.length);
      expect(reopened.next).toBe(outcome.acknowledged.length + 1);
      console.log(
        `real full disk: ${outcome.acknowledged.length} inserts of 24 KiB acknowledged on a 4 MiB tmpfs, ${outcome.refusals.length} refused (${failures[0]}); after freeing 1 MiB the store opened with exactly the acknowledged jobs in ${reopened.segments} segments`,
      );
    } finally {
      if (refusedMount === undefined) {
        execFileSync("umount", [mountPoint], { stdio: "pipe" });
        await fs.rm(scratch, { recursive: true, force: true });
      }
    }
  }, 60_000);
});
