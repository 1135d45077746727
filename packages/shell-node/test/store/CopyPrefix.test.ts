// Proves copy-prefix reads its copy back before publishing it and refuses one that does not fold,
// whole, to the prefix it copied: a disk that hands back another valid copy's segments (the same
// STORE_ID and sizes, one finished job's args changed, which a lean fold keeps no trace of) gets
// CopyVerificationFailed and nothing at the target; the same copy on an honest disk is published.
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { describe, expect, it } from "@effect/vitest";
import { Event } from "@tay/core";
import { Effect } from "effect";
import { Disk, type DiskService } from "../../src/disk/Disk.js";
import * as Entropy from "../../src/disk/Entropy.js";
import * as Projection from "../../src/log/Projection.js";
import * as CopyPrefix from "../../src/store/CopyPrefix.js";
import * as Init from "../../src/store/Init.js";
import * as Store from "../../src/store/Store.js";
import { diskLayer, nodeDisk, temporaryDirectory } from "../support/store.js";

/** A store at `directory`: job 1 (args `args`) inserted, run and completed, then job 2 inserted. */
const makeSource = (directory: string, args: string) =>
  Effect.gen(function* () {
    yield* Init.init(directory);
    const job = (jobId: number, jobArgs: string) =>
      Event.jobInserted({
        jobId,
        queue: "q",
        worker: "W",
        args: jobArgs,
        priority: 0,
        maxAttempts: 1,
        scheduledAt: 0,
        insertedAt: 0,
      });
    yield* Effect.scoped(
      Effect.gen(function* () {
        const { store } = yield* Store.open(directory, {}, Projection.count);
        yield* store.append([
          job(1, args),
          Event.jobStarted({ jobId: 1, at: 1, attempt: 1 }),
          Event.jobFinished({ jobId: 1, outcome: "completed", error: null, at: 2 }),
          job(2, "second"),
        ]);
        yield* store.close();
      }),
    );
  });

/** The same staging directory name and STORE_ID for every copy made with it. */
const copying = (source: string, target: string) =>
  CopyPrefix.copyPrefix(source, target).pipe(
    Effect.provideService(Entropy.Entropy, Entropy.seeded(7)),
  );

/** `inner`, but every segment file under a `.data.tay-copy-*` staging directory is read from `decoy`. */
const swappingSegments = (inner: DiskService, decoy: string): DiskService => {
  const swapped = (file: string): string => {
    const match = /\/\.data\.tay-copy-[0-9a-f]{16}\/(.*\/segments\/.*)$/.exec(file);
    return match?.[1] === undefined ? file : path.join(decoy, match[1]);
  };
  return {
    ...inner,
    open: (file, mode, options) =>
      inner.open(mode === "read" ? swapped(file) : file, mode, options),
    readFile: (file) => inner.readFile(swapped(file)),
  };
};

describe("copy-prefix", () => {
  it.scoped("refuses a copy that reads back as another state, publishing nothing", () =>
    Effect.gen(function* () {
      const root = yield* temporaryDirectory;
      const paths = (name: string) => ({
        source: path.join(root, name, "source"),
        target: path.join(root, name, "data"),
      });
      const honest = paths("honest");
      const lying = paths("lying");
      for (const name of ["honest", "lying"]) {
        yield* Effect.promise(() => fs.mkdir(path.join(root, name)));
      }
      yield* makeSource(honest.source, "a");
      yield* makeSource(lying.source, "b");
      // The decoy: the honest source's copy, same STORE_ID (seeded) and sizes, other args.
      yield* copying(honest.source, honest.target);
      const inner = yield* Disk;
      const refused = yield* Effect.flip(
        copying(lying.source, lying.target).pipe(
          Effect.provide(diskLayer(swappingSegments(inner, honest.target))),
        ),
      );
      expect(refused._tag).toBe("CopyVerificationFailed");
      expect(refused.message).toContain("folds to another state");
      // Not published, and its staging directory removed.
      expect(yield* Effect.promise(() => fs.readdir(path.dirname(lying.target)))).toEqual([
        "source",
      ]);
      // The same copy on the honest disk is published.
      const copied = yield* copying(lying.source, lying.target);
      expect(copied.target).toMatchObject({ path: lying.target, lastSequence: copied.baseRecords });
    }).pipe(Effect.provide(nodeDisk)),
  );
  it.scoped("copies into a target holding only a LOCK, and refuses one holding anything else", () =>
    Effect.gen(function* () {
      const root = yield* temporaryDirectory;
      const source = path.join(root, "source");
      yield* makeSource(source, "a");
      // A directory an opener's LOCK is all there is in: no store yet, replaced by the copy.
      const target = path.join(root, "data");
      yield* Effect.promise(async () => {
        await fs.mkdir(target);
        await fs.writeFile(path.join(target, "LOCK"), "");
      });
      const copied = yield* copying(source, target);
      expect(copied.target).toMatchObject({ path: target, lastSequence: copied.baseRecords });
      expect(yield* Effect.promise(() => fs.readdir(target))).toContain("CURRENT");
      const busy = path.join(root, "busy");
      yield* Effect.promise(async () => {
        await fs.mkdir(busy);
        await fs.writeFile(path.join(busy, "notes.txt"), "mine");
      });
      const refused = yield* Effect.flip(copying(source, busy));
      expect(refused._tag).toBe("NotEmpty");
      expect(yield* Effect.promise(() => fs.readdir(busy))).toEqual(["notes.txt"]);
    }).pipe(Effect.provide(nodeDisk)),
  );
  it.scoped("leaves out a record the fold refuses and counts it with every record after it", () =>
    Effect.gen(function* () {
      const root = yield* temporaryDirectory;
      const source = path.join(root, "source");
      yield* Init.init(source);
      const inserted = (jobId: number) =>
        Event.jobInserted({
          jobId,
          queue: "q",
          worker: "W",
          args: jobId,
          priority: 0,
          maxAttempts: 1,
          scheduledAt: 0,
          insertedAt: 0,
        });
      // The raw store appends without folding: sequence 2 starts a job that does not exist.
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(source, {}, Projection.count);
          yield* store.append([
            inserted(1),
            Event.jobStarted({ jobId: 9, at: 1, attempt: 1 }),
            inserted(2),
            inserted(3),
          ]);
          yield* store.close();
        }),
      );
      const copied = yield* copying(source, path.join(root, "data"));
      expect(copied.copied).toMatchObject({ records: 1, firstSequence: 1, lastSequence: 1 });
      expect(copied.leftOut).toMatchObject({ sequence: 2, records: 3 });
    }).pipe(Effect.provide(nodeDisk)),
  );
});
