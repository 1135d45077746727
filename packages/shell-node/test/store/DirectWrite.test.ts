// Proves the writer's direct path (docs/store.md, "the direct path writes a batch without a
// fiber"): under `Immediate` every batch goes through the handle's callback write (`write.now`)
// and concurrent appends still share writes; other flush policies keep the flusher's Effect
// write; the reused layout buffer leaves no byte of an earlier batch in a later one, across sizes
// past its 1 MiB bound; a failed `write.now` takes the batch back and stops the writer. It runs
// NodeDisk under a wrapper that counts the two kinds of write, and fails `write.now` on demand.
// Under Maximal a lone small batch is written on the caller's thread (`write.inline`), a larger one
// through `write.now`, as is one while slow inline writes have overdrawn their budget; the inline
// path comes back once the budget has refilled (the wrapper makes inline writes slow on demand).
import { describe, expect, it } from "@effect/vitest";
import { Effect, Either, type Scope } from "effect";
import { DiskError, type DiskService, type FileHandle, type Write } from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Projection from "../../src/log/Projection.js";
import * as Store from "../../src/store/Store.js";
import * as StoreOptions from "../../src/store/StoreOptions.js";
import * as InlineWrite from "../../src/store/internal/inlineWrite.js";
import { diskLayer, initialized, inserted, nodeDisk, reopenedCount } from "../support/store.js";

interface WriteCounts {
  effectWrites: number;
  nowWrites: number;
  inlineWrites: number;
  /** While above 0, each inline write waits this long after it returned (a slow disk). */
  slowInlineMs: number;
  /** While set, `write.now` fails with EIO and writes nothing. */
  failNow: boolean;
  /** While set, `write.now` throws (a bug below the writer). */
  throwNow: boolean;
  /** While set, `write.inline` fails with EIO and writes nothing. */
  failInline: boolean;
  /** An inline write was made in this turn of the event loop (cleared at the next check phase). */
  inlineThisTurn: boolean;
  /** Inline writes made in a turn that had one already. */
  inlineSameTurn: number;
}

/**
 * One producer awaiting one insert after another on `engine` (then closed), with a zero timer
 * armed at the start: until the timer fired and for at least 20 chain budgets, at most 20,000
 * inserts. How many were made when the timer fired, and in all.
 */
const insertsUntilTimer = async (engine: EnginePromises.OpenedEngine) => {
  let fired: number | undefined;
  let index = 0;
  setTimeout(() => {
    fired = index;
  }, 0);
  const started = performance.now();
  while (fired === undefined || performance.now() - started < 20 * InlineWrite.chainBudgetMs) {
    await engine.insert({ worker: "W", queue: "q", args: { index } });
    index += 1;
    if (index === 20_000) break;
  }
  await engine.close();
  return { fired, inserted: index };
};

const planted = (path: string): DiskError =>
  new DiskError({ operation: "write", path, code: "EIO", detail: "planted" });

/**
 * NodeDisk whose segment handles count Effect writes and callback writes apart; with `inline`,
 * they also offer `write.inline` (counted, and slow on demand).
 */
const splitCounting = (
  inlineWrites = false,
  base: DiskService = NodeDisk.make,
): { readonly service: DiskService; readonly counts: WriteCounts } => {
  const counts: WriteCounts = {
    effectWrites: 0,
    nowWrites: 0,
    inlineWrites: 0,
    slowInlineMs: 0,
    failNow: false,
    throwNow: false,
    failInline: false,
    inlineThisTurn: false,
    inlineSameTurn: 0,
  };
  const wrap = (handle: FileHandle): FileHandle => {
    const inner = handle.write;
    const now = inner.now;
    const inline = inner.inline;
    const write: Write = Object.assign(
      (position: number, bytes: Uint8Array) =>
        Effect.suspend(() => {
          counts.effectWrites += 1;
          return inner(position, bytes);
        }),
      {
        ...(now === undefined
          ? {}
          : {
              now: (position: number, bytes: Uint8Array, done: Parameters<typeof now>[2]) => {
                counts.nowWrites += 1;
                if (counts.throwNow) throw new Error("planted defect");
                if (counts.failNow) {
                  done(planted(handle.path), 0);
                  return;
                }
                now(position, bytes, done);
              },
            }),
        ...(inline === undefined || !inlineWrites
          ? {}
          : {
              inline: (position: number, bytes: Uint8Array) => {
                counts.inlineWrites += 1;
                if (counts.failInline) return Either.left(planted(handle.path));
                if (counts.inlineThisTurn) counts.inlineSameTurn += 1;
                counts.inlineThisTurn = true;
                setImmediate(() => {
                  counts.inlineThisTurn = false;
                });
                const outcome = inline(position, bytes);
                const until = performance.now() + counts.slowInlineMs;
                while (performance.now() < until) {
                  // A slow device: the caller's thread waits.
                }
                return outcome;
              },
            }),
      },
    );
    return { ...handle, write };
  };
  const service: DiskService = {
    ...base,
    open: (file, mode, options) => Effect.map(base.open(file, mode, options), wrap),
  };
  return { service, counts };
};

/**
 * Counts from zero: after an open, whose writes are not the test's, and its first append (which
 * may find the flusher holding the writer's turn and go through its Effect write).
 */
const restart = (counts: WriteCounts): void => {
  counts.effectWrites = 0;
  counts.nowWrites = 0;
  counts.inlineWrites = 0;
};

const range = (from: number, to: number): Array<number> =>
  Array.from({ length: to - from + 1 }, (_, index) => from + index);

describe("the direct path", () => {
  it.scopedLive(
    "writes every Immediate batch through write.now; concurrent appends share them",
    () =>
      Effect.gen(function* () {
        const directory = yield* initialized;
        const { service, counts } = splitCounting();
        const appends = 64;
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { store } = yield* Store.open(directory, {}, Projection.count);
            yield* Effect.forEach(range(1, appends), (jobId) => store.append([inserted(jobId)]), {
              concurrency: "unbounded",
            });
          }).pipe(Effect.provide(diskLayer(service))),
        );
        expect(counts.effectWrites).toBe(0);
        expect(counts.nowWrites).toBeGreaterThan(0);
        expect(counts.nowWrites).toBeLessThan(appends / 4);
        expect(yield* reopenedCount(directory)).toBe(appends);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("leaves other flush policies to the flusher's Effect write", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const { service, counts } = splitCounting();
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(
            directory,
            { flush: StoreOptions.Batch(2) },
            Projection.count,
          );
          yield* store.append([inserted(1), inserted(2)]);
        }).pipe(Effect.provide(diskLayer(service))),
      );
      expect(counts.nowWrites).toBe(0);
      expect(counts.effectWrites).toBeGreaterThan(0);
      expect(yield* reopenedCount(directory)).toBe(2);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("reuses its layout buffer without a stale byte, past its 1 MiB bound", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      // Large, small, larger than the reused buffer's bound, small again: every
      // record must read back with its CRC.
      const sizes = [200_000, 10, 300_000, 50, 1_200_000, 5, 70_000];
      let jobId = 0;
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(
            directory,
            { durability: "Throughput" },
            Projection.count,
          );
          for (const bytes of sizes) {
            const records = bytes > 100_000 ? 4 : 1;
            const events = range(1, records).map(() => {
              jobId += 1;
              return inserted(jobId, Math.floor(bytes / records));
            });
            yield* store.append(events);
          }
        }),
      );
      expect(yield* reopenedCount(directory)).toBe(jobId);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a failed write.now takes the batch back and stops the writer", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const { service, counts } = splitCounting();
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(directory, {}, Projection.count);
          yield* store.append([inserted(1)]);
          counts.failNow = true;
          const failed = yield* Effect.flip(store.append([inserted(2)]));
          expect(failed).toMatchObject({
            _tag: "WriterFailed",
            cause: { _tag: "DiskError", code: "EIO" },
            rollback: { _tag: "RolledBack" },
          });
          counts.failNow = false;
          const refused = yield* Effect.flip(store.append([inserted(3)]));
          expect(refused._tag).toBe("WriterFailed");
        }).pipe(Effect.provide(diskLayer(service))),
      );
      expect(yield* reopenedCount(directory)).toBe(1);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a defect in a step stops the writer instead of holding its turn for ever", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const { service, counts } = splitCounting();
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(directory, {}, Projection.count);
          yield* store.append([inserted(1)]);
          counts.throwNow = true;
          const failed = yield* Effect.flip(store.append([inserted(2)]));
          expect(failed._tag).toBe("WriterFailed");
          expect(failed.message).toContain("the writer's step died: Error: planted defect");
          counts.throwNow = false;
          expect((yield* Effect.flip(store.append([inserted(3)])))._tag).toBe("WriterFailed");
        }).pipe(Effect.provide(diskLayer(service))),
      );
      expect(yield* reopenedCount(directory)).toBe(1);
    }).pipe(Effect.provide(nodeDisk)),
  );
});

describe("durable writes on the caller's thread", () => {
  /** A Maximal store over `splitCounting(true)`, one append made, the counts from zero. */
  const warmed = <A, E>(
    body: (store: Store.Store, counts: WriteCounts) => Effect.Effect<A, E, Scope.Scope>,
    durability: StoreOptions.DurabilityPolicy = "Maximal",
  ) =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const { service, counts } = splitCounting(true);
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(directory, { durability }, Projection.count);
          yield* store.append([inserted(1)]);
          restart(counts);
          yield* body(store, counts);
        }).pipe(Effect.provide(diskLayer(service))),
      );
      return { directory, counts };
    });

  it.scopedLive(
    "Maximal writes a lone small batch inline and a batch over a page in the pool",
    () =>
      Effect.gen(function* () {
        const { directory } = yield* warmed((store, counts) =>
          Effect.gen(function* () {
            const before = (yield* store.stats()).inlineWrites.writes;
            yield* store.append([inserted(2)]);
            expect(counts).toMatchObject({ inlineWrites: 1, nowWrites: 0, effectWrites: 0 });
            // The store's stats count it (and `/metrics` reads them: Metrics.test.ts).
            expect((yield* store.stats()).inlineWrites.writes).toBe(before + 1);
            // (A small write after it goes to the pool if that real write was slow: not asked.)
            yield* store.append([inserted(3, 5000)]);
            expect(counts).toMatchObject({ inlineWrites: 1, nowWrites: 1, effectWrites: 0 });
          }),
        );
        expect(yield* reopenedCount(directory)).toBe(3);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "Segment writes a lone batch of up to 64 KiB inline (a page-cache copy) and a larger one in the pool",
    () =>
      Effect.gen(function* () {
        const { directory } = yield* warmed(
          (store, counts) =>
            Effect.gen(function* () {
              // Beyond Maximal's one page, within Segment's 64 KiB.
              yield* store.append([inserted(2, 20_000)]);
              expect(counts).toMatchObject({ inlineWrites: 1, nowWrites: 0, effectWrites: 0 });
              yield* store.append([inserted(3, 70_000)]);
              expect(counts).toMatchObject({ inlineWrites: 1, nowWrites: 1, effectWrites: 0 });
            }),
          "Segment",
        );
        expect(yield* reopenedCount(directory)).toBe(3);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "Throughput never writes through write.inline (its handle writes inline itself)",
    () =>
      Effect.gen(function* () {
        const { counts } = yield* warmed(
          (store) => Effect.asVoid(store.append([inserted(2)])),
          "Throughput",
        );
        expect(counts).toMatchObject({ inlineWrites: 0, nowWrites: 1 });
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive.each(["Maximal", "Segment"] as const)(
    "a slow write within the budget keeps the inline path; one that overdraws it sends writes to the pool until it refilled (%s)",
    (durability) =>
      Effect.gen(function* () {
        const { directory } = yield* warmed(
          (store, counts) =>
            Effect.gen(function* () {
              const before = (yield* store.stats()).inlineWrites;
              // The odd slow write: its time is spent from the budget, the path stays.
              counts.slowInlineMs = InlineWrite.inlineSlowMs + 1;
              yield* store.append([inserted(2)]);
              counts.slowInlineMs = 0;
              const spent = (yield* store.stats()).inlineWrites;
              expect(spent.writes).toBe(before.writes + 1);
              expect(spent.slow).toBe(before.slow + 1);
              expect(spent.slowestMs).toBeGreaterThan(InlineWrite.inlineSlowMs);
              yield* store.append([inserted(3)]);
              expect(counts).toMatchObject({ inlineWrites: 2, nowWrites: 0 });
              // A write longer than the whole budget overdraws it by at least 5 ms.
              const overdraftMs = 5;
              counts.slowInlineMs = InlineWrite.slowBudgetMs + overdraftMs;
              yield* store.append([inserted(4)]);
              counts.slowInlineMs = 0;
              const heldAt = performance.now();
              yield* store.append([inserted(5)]);
              yield* store.append([inserted(6)]);
              expect(counts).toMatchObject({ inlineWrites: 3, nowWrites: 2 });
              // Inline again once the budget has refilled to zero, not before.
              let jobId = 6;
              while (counts.inlineWrites === 3 && jobId < 400) {
                yield* Effect.sleep(5);
                jobId += 1;
                yield* store.append([inserted(jobId)]);
              }
              expect(counts.inlineWrites).toBe(4);
              expect(performance.now() - heldAt).toBeGreaterThanOrEqual(
                (overdraftMs / InlineWrite.slowBudgetRate) * 0.9,
              );
              return jobId;
            }),
          durability,
        );
        expect(yield* reopenedCount(directory)).toBeGreaterThanOrEqual(7);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("a failed inline write takes the batch back and stops the writer", () =>
    Effect.gen(function* () {
      const { directory } = yield* warmed((store, counts) =>
        Effect.gen(function* () {
          counts.failInline = true;
          const failed = yield* Effect.flip(store.append([inserted(2)]));
          expect(failed).toMatchObject({
            _tag: "WriterFailed",
            cause: { _tag: "DiskError", code: "EIO" },
            rollback: { _tag: "RolledBack" },
          });
          expect(counts.inlineWrites).toBe(1);
        }),
      );
      expect(yield* reopenedCount(directory)).toBe(1);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("makes at most one inline write per turn of the event loop", () =>
    Effect.gen(function* () {
      const inlineWanted = 50;
      // The fault disk's writes are microseconds once warm (a slow first one holds the inline path
      // off for a while, so the loop runs until enough were inline, within a bound).
      const { service, counts } = splitCounting(true, FaultDisk.make());
      // The engine's promise face, awaited one insert after another: each answer issues the next
      // insert in a microtask, so without the rule the loop would never turn.
      yield* Effect.promise(async () => {
        const engine = await EnginePromises.open("/data", {
          createIfMissing: true,
          disk: diskLayer(service),
        });
        for (let index = 0; index < 2000 && counts.inlineWrites < inlineWanted; index++) {
          await engine.insert({ worker: "W", queue: "q", args: { index } });
        }
        await engine.close();
      });
      expect(counts.inlineWrites).toBeGreaterThanOrEqual(inlineWanted);
      expect(counts.inlineSameTurn).toBe(0);
    }),
  );

  it.scopedLive(
    "chains Segment's inline writes within a turn for the budget, and lets the loop turn",
    () =>
      Effect.gen(function* () {
        const { service, counts } = splitCounting(true, FaultDisk.make());
        // One producer awaiting each insert: its writes chain in microtasks; under Segment
        // several go inline in one turn (a page-cache copy each), never for longer than the
        // budget, so a timer armed at the start fires while the inserts go on.
        const turns = yield* Effect.promise(async () =>
          insertsUntilTimer(
            await EnginePromises.open("/data", {
              createIfMissing: true,
              durability: "Segment",
              disk: diskLayer(service),
            }),
          ),
        );
        expect(counts.inlineSameTurn).toBeGreaterThan(0);
        expect(turns.fired).toBeDefined();
        expect(turns.fired).toBeLessThan(turns.inserted);
      }),
  );

  it.scopedLive(
    "lets the loop turn under Throughput while a producer awaits one insert after another",
    () =>
      Effect.gen(function* () {
        const directory = yield* initialized;
        // Throughput's handle writes each batch on the caller's thread and answers at once: each
        // answer issues the next insert in a microtask, so without the chain's budget no timer
        // would fire until the loop below ended (measured: none in 1.1 s of a worker's backlog).
        const turns = yield* Effect.promise(async () =>
          insertsUntilTimer(await EnginePromises.open(directory, { durability: "Throughput" })),
        );
        expect(turns.fired).toBeDefined();
        expect(turns.fired).toBeLessThan(turns.inserted);
      }).pipe(Effect.provide(nodeDisk)),
  );
});
