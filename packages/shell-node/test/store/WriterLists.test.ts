// The writer's lists and layout view on a small batch's path (docs/store.md, "Appends",
// 2026-12-04, issue 16): an append onto an empty queue is queued as a copy of the caller's list
// (the engine hands its drain's list, which it later gives its subscribers: the writer must not
// push a later append's records onto it); batches of one length in a row are laid out in one kept
// view of the reused buffer, and a batch of another length gets a view of its own length; a lone
// ticket is taken off the list (keeping the list's room) before its waiter, which may append again.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Either } from "effect";
import * as Batch from "../../src/log/Batch.js";
import { AppendConflict } from "../../src/log/LogError.js";
import * as Projection from "../../src/log/Projection.js";
import * as Ticket from "../../src/log/Ticket.js";
import * as Store from "../../src/store/Store.js";
import { initialized, inserted, nodeDisk, reopenedCount } from "../support/store.js";

describe("the writer's lists", () => {
  it.scopedLive("queues an append onto an empty queue without holding the caller's list", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { log } = yield* Store.open(
            directory,
            { durability: "Throughput" },
            Projection.count,
          );
          const first = Either.getOrThrow(Batch.prepare([inserted(1)]));
          const second = Either.getOrThrow(Batch.prepare([inserted(2), inserted(3)]));
          // One turn: the second append finds the first still queued (nothing written yet).
          const before = log.lastSequence();
          const firstTicket = log.append(first, before);
          const secondTicket = log.append(second, before + 1);
          if (firstTicket instanceof AppendConflict || secondTicket instanceof AppendConflict) {
            throw new Error("a lone writer met a conflict");
          }
          expect(first.records.map((record) => record.sequence)).toEqual([before + 1]);
          expect(second.records.map((record) => record.sequence)).toEqual([before + 2, before + 3]);
          yield* Ticket.wait(secondTicket);
          expect(firstTicket.settled).toBe(true);
          // Still the caller's own lists, as they were handed over.
          expect(first.records.length).toBe(1);
          expect(second.records.length).toBe(2);
        }),
      );
      expect(yield* reopenedCount(directory)).toBe(3);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "takes a lone ticket off its list before telling it: its waiter may append again",
    () =>
      Effect.gen(function* () {
        const directory = yield* initialized;
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { log } = yield* Store.open(
              directory,
              { durability: "Throughput" },
              Projection.count,
            );
            const first = log.append(
              Either.getOrThrow(Batch.prepare([inserted(1)])),
              log.lastSequence(),
            );
            if (first instanceof AppendConflict) throw new Error("a lone writer met a conflict");
            let again: ReturnType<typeof log.append> | undefined;
            // Appends from inside the waiter, as a caller answered synchronously may.
            Ticket.onSettled(first, () => {
              again = log.append(
                Either.getOrThrow(Batch.prepare([inserted(2)])),
                log.lastSequence(),
              );
            });
            yield* Ticket.wait(first);
            if (again === undefined || again instanceof AppendConflict) {
              throw new Error("the waiter did not append");
            }
            yield* Effect.timeoutFail(Ticket.wait(again), {
              duration: "5 seconds",
              onTimeout: () => new Error("the waiter's append was never settled"),
            });
          }),
        );
        expect(yield* reopenedCount(directory)).toBe(2);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("lays batches of one length and of others out without a stale byte", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      // Runs of one length (the kept view), shorter and longer ones between, and one past the
      // reused buffer's first 4 KiB (a new buffer): every record must read back with its CRC.
      const sizes = [10, 10, 10, 40, 40, 10, 5, 9_000, 9_000, 10, 10, 40];
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { store } = yield* Store.open(
            directory,
            { durability: "Throughput" },
            Projection.count,
          );
          let jobId = 0;
          for (const bytes of sizes) {
            jobId += 1;
            yield* store.append([inserted(jobId, bytes)]);
          }
        }),
      );
      expect(yield* reopenedCount(directory)).toBe(sizes.length);
    }).pipe(Effect.provide(nodeDisk)),
  );
});
