/**
 * A real engine on the fault disk whose writes end when fast-check's
 * scheduler releases them, for suites that interleave commands with batches
 * in flight (UniqueInterleavings, CompactionInterleavings; docs/testing.md,
 * "Interleavings").
 */
import { Effect } from "effect";
import type fc from "fast-check";
import type * as Disk from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Init from "../../src/store/Init.js";

/** A disk whose writes, once `gate.on`, each end when the scheduler releases them. */
export const gatedWrites = (
  inner: Disk.DiskService,
  s: fc.Scheduler,
  gate: { on: boolean },
): Disk.DiskService => {
  const released = Effect.promise(() =>
    gate.on ? s.schedule(Promise.resolve()) : Promise.resolve(),
  );
  const wrap = (handle: Disk.FileHandle): Disk.FileHandle => ({
    ...handle,
    write: (position, bytes) => Effect.zipRight(released, handle.write(position, bytes)),
  });
  return {
    ...inner,
    open: (file, mode, options) => Effect.map(inner.open(file, mode, options), wrap),
    create: (file, bytes) => Effect.map(inner.create(file, bytes), wrap),
  };
};

/**
 * A store made at /data and an engine open on it, its writes gated from
 * now on; `disk` and `layer` reach the same files without the gate.
 */
export const openGated = async (s: fc.Scheduler) => {
  const disk = FaultDisk.make();
  disk.seedDirectory("/data");
  const gate = { on: false };
  const layer = FaultDisk.layer(gatedWrites(disk, s, gate));
  await Effect.runPromise(Effect.provide(Init.init("/data"), layer));
  const engine = await EnginePromises.open("/data", { disk: layer });
  gate.on = true;
  return { engine, disk, layer: FaultDisk.layer(disk) };
};

/** Releases what the scheduler holds until `done` has settled (writes are scheduled late). */
export const driven = async (s: fc.Scheduler, done: Promise<unknown>): Promise<void> => {
  let settled = false;
  const watched = done.finally(() => {
    settled = true;
  });
  while (!settled) {
    await s.waitAll();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await watched;
};
