/**
 * A Node disk whose segment syncs can be held: a batch is written but not
 * durable for as long as a test wants, to check that nothing is answered
 * or shown before it is.
 */
import { Effect, Layer } from "effect";
import { Disk, type DiskService, type FileHandle } from "../../src/disk/Disk.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";

/**
 * The Node disk with every segment sync held until `release` is called:
 * a batch is written but not durable for as long as the test wants.
 */
export const holdingSyncs = () => {
  let release: () => void = () => undefined;
  let held: Promise<void> | undefined;
  const state = { waiting: 0 };
  const inner = NodeDisk.make;
  const wrap = (handle: FileHandle): FileHandle => ({
    ...handle,
    sync: () =>
      Effect.suspend(() => {
        const gate = held;
        if (gate === undefined || !handle.path.endsWith(".tay")) return handle.sync();
        state.waiting += 1;
        return Effect.zipRight(
          Effect.promise(() => gate),
          handle.sync(),
        );
      }),
  });
  const service: DiskService = {
    ...inner,
    // Options are dropped on purpose: without O_DSYNC every batch has a
    // separate sync, which is what this wrapper holds or counts.
    open: (file, mode) => Effect.map(inner.open(file, mode), wrap),
    create: (file, bytes) => Effect.map(inner.create(file, bytes), wrap),
  };
  return {
    layer: Layer.succeed(Disk, service),
    state,
    hold: () => {
      held = new Promise((resolve) => {
        release = () => {
          held = undefined;
          resolve();
        };
      });
    },
    release: () => release(),
  };
};
