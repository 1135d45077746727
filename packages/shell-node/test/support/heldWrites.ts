/**
 * A disk whose next write to a file the test names waits until the test
 * lets it go: an operation held at a chosen point, the same every run, so
 * that what happens meanwhile is decided by the test and not by timing.
 */
import { Effect } from "effect";
import type { DiskService, FileHandle } from "../../src/disk/Disk.js";

/** A held write: `reached` once it waits, `release` lets it go on. */
export interface Hold {
  readonly reached: Promise<void>;
  readonly release: () => void;
}

interface Armed {
  readonly matches: (path: string) => boolean;
  readonly released: Promise<void>;
  readonly reached: () => void;
}

/** `inner` whose next write to a file `holdNext` names waits until the test releases it. */
export const holdingWrites = (inner: DiskService) => {
  let armed: Armed | undefined;
  // Replacing `write` drops its `now` and `inline` (Disk.ts): every write then comes through here.
  const wrap = (handle: FileHandle): FileHandle => ({
    ...handle,
    write: (position, bytes) =>
      Effect.suspend(() => {
        const hold = armed;
        if (hold === undefined || !hold.matches(handle.path)) return handle.write(position, bytes);
        armed = undefined;
        hold.reached();
        return Effect.zipRight(
          Effect.promise(() => hold.released),
          handle.write(position, bytes),
        );
      }),
  });
  const service: DiskService = {
    ...inner,
    open: (file, mode, options) => Effect.map(inner.open(file, mode, options), wrap),
    create: (file, bytes) => Effect.map(inner.create(file, bytes), wrap),
  };
  const holdNext = (matches: (path: string) => boolean): Hold => {
    let release = () => {};
    let reached = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const waiting = new Promise<void>((resolve) => {
      reached = resolve;
    });
    armed = { matches, released, reached };
    return { reached: waiting, release };
  };
  return { service, holdNext };
};
