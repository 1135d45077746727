/**
 * Room that appears while a claim's batch is being written is claimed in the next batch, beside
 * the end that freed it, rather than after that write: with one claim in flight at a time,
 * handlers that end at different times settle into groups that take turns at the disk (measured
 * 2026-12-02 under a slow disk: claims of 1 and 7 jobs alternating, two writes per round of 8
 * jobs). On a fault disk whose writes the test holds, the end of job 2 and the claim of job 4
 * must share a batch while the batch of job 1's end (and job 3's claim) is held in flight.
 */
import type { Event } from "@tay/core";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import type * as Disk from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import * as Worker from "../../src/worker/Worker.js";
import { faultDirectory } from "../support/workerHarness.js";

/** Writes pass while open; once held, each waits until `open` (and `heldWrite` tells of the first). */
class Gate {
  private held = false;
  private waiting: Array<() => void> = [];
  private onHeld: (() => void) | undefined;

  hold(): Promise<void> {
    this.held = true;
    return new Promise((resolve) => {
      this.onHeld = resolve;
    });
  }

  open(): void {
    this.held = false;
    const waiting = this.waiting;
    this.waiting = [];
    for (const resume of waiting) resume();
  }

  readonly pass: Effect.Effect<void> = Effect.suspend(() =>
    this.held
      ? Effect.async<void>((resume) => {
          this.waiting.push(() => resume(Effect.void));
          const onHeld = this.onHeld;
          this.onHeld = undefined;
          onHeld?.();
        })
      : Effect.void,
  );
}

const gated = (inner: Disk.DiskService, gate: Gate): Disk.DiskService => {
  const wrap = (handle: Disk.FileHandle): Disk.FileHandle => ({
    ...handle,
    write: (position, bytes) => Effect.zipRight(gate.pass, handle.write(position, bytes)),
  });
  return {
    ...inner,
    open: (file, mode, options) => Effect.map(inner.open(file, mode, options), wrap),
    create: (file, bytes) => Effect.map(inner.create(file, bytes), wrap),
  };
};

const tagsOf = (event: Event.Event): Array<string> =>
  (event._tag === "Mutation" ? event.events : [event]).flatMap((member) =>
    member._tag === "JobStarted"
      ? [`Started ${member.jobId}`]
      : member._tag === "JobFinished"
        ? [`Finished ${member.jobId}`]
        : [],
  );

describe("the worker's claims", () => {
  it("claims room freed while a claim is being written in the next batch, not after it", async () => {
    const gate = new Gate();
    const disk = FaultDisk.make();
    disk.seedDirectory(faultDirectory);
    const layer = FaultDisk.layer(gated(disk, gate));
    let releaseSecond: () => void = () => {};
    const second = new Promise<void>((resolve) => {
      releaseSecond = resolve;
    });
    let firstHeld: Promise<void> = Promise.resolve();
    const program = Effect.gen(function* () {
      yield* Effect.provide(Init.init(faultDirectory), layer);
      const engine = yield* Effect.provide(Engine.open(faultDirectory), layer);
      yield* engine.insertMany(
        [1, 2, 3, 4].map((index) => ({ queue: "q", worker: "W", args: index })),
      );
      const batches: Array<ReadonlyArray<string>> = [];
      const unwatch = engine.watch((records) => {
        const tags = records.flatMap(({ event }) => tagsOf(event));
        if (tags.length > 0) batches.push(tags);
      });
      yield* Effect.addFinalizer(() => Effect.sync(unwatch));
      const ended = new Set<number>();
      yield* Worker.run(engine, {
        queues: { q: 2 },
        handlers: {
          W: async (job) => {
            if (job.jobId === 1) {
              // Job 1's end (and the claim of job 3 beside it) is held in flight...
              firstHeld = gate.hold();
              return;
            }
            // ...while job 2 ends.
            if (job.jobId === 2) await second;
          },
        },
        onEvent: (event) => {
          if (event._tag === "Completed") ended.add(event.job.jobId);
        },
      });
      yield* Effect.promise(async () => {
        for (let turn = 0; turn < 1_000 && batches.length === 0; turn++) {
          await new Promise((resolve) => setImmediate(resolve));
        }
        await firstHeld;
        releaseSecond();
        // Job 2's end is issued (and, claimed concurrently, job 4's claim beside it).
        for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
        gate.open();
        for (let turn = 0; turn < 1_000 && ended.size < 4; turn++) {
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      });
      expect(ended.size).toBe(4);
      expect(batches).toEqual([
        ["Started 1", "Started 2"],
        ["Finished 1", "Started 3"],
        ["Finished 2", "Started 4"],
        ["Finished 3"],
        ["Finished 4"],
      ]);
    }).pipe(Effect.scoped);
    await Effect.runPromise(program);
  });
});
