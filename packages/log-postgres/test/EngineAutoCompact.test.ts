/**
 * Compaction on its own (`autoCompact`) over a PostgreSQL store shared by
 * two engines: the engine whose commits bring the log past the rule
 * compacts (the base's length is the log's `generation()`), the store moves
 * to the next epoch with the retention's drops, and both engines go on
 * serving; what either engine's own try met (the other's compaction
 * holding the lease, a head that moved) is counted, never a stop. On a real
 * server (skipped, with the reason printed, when none answers).
 */
import { describe, expect, it } from "@effect/vitest";
import { PgLog, PgSchema } from "@tay/log-postgres";
import { Engine, StateProjection } from "@tay/shell-node";
import { Effect, Schedule } from "effect";
import * as Server from "./support/server.js";

const server = await Server.locate();
const serverUrl = "url" in server ? server.url : "";

const database = Effect.acquireRelease(
  Effect.promise(() => Server.freshDatabase(serverUrl)),
  (made) => Effect.promise(() => made.drop()),
);

const autoCompact = { retentionMs: 0, minRecords: 20 };

/** An engine over the store for the scope, compacting on its own. */
const engineOver = (url: string) =>
  Effect.flatMap(PgLog.open(url, {}, StateProjection.foldProjection), (recovered) =>
    Engine.fromLog(recovered, { timers: false, rescueOnOpen: false, autoCompact }),
  );

describe.skipIf(!("url" in server))("engines that compact on their own, one store", () => {
  it.scopedLive("the one whose commits pass the rule compacts; both go on", () =>
    Effect.gen(function* () {
      const { url } = yield* database;
      yield* PgSchema.init(url);
      const first = yield* engineOver(url);
      const second = yield* engineOver(url);
      const kept = yield* second.insert({ queue: "kept", worker: "W", args: null });
      // An insert and a cancel each: 1 + 2 × 10 records, past the rule's 20.
      for (let index = 0; index < 10; index++) {
        const job = yield* first.insert({ queue: "q", worker: "W", args: index });
        yield* first.cancel(job.jobId);
      }
      // Until the compaction has ended (its CURRENT moves before it deletes the old rows).
      const stats = yield* Effect.sync(() => first.autoCompaction()).pipe(
        Effect.filterOrFail((now) => now !== null && now.runs + now.failures > 0),
        Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 250 }),
      );
      expect(stats).toMatchObject({ runs: 1, failures: 0, running: false, lastError: null });
      expect(second.autoCompaction()).toMatchObject({ runs: 0 });
      expect((yield* first.log.generation()).epoch).toBe(2);
      // The retention dropped the cancelled jobs; the waiting one stands, and both engines serve.
      expect(yield* first.job(2)).toBeUndefined();
      const next = yield* second.insert({ queue: "kept", worker: "W", args: "after" });
      expect(next.jobId).toBe(12);
      const keptJobs = yield* second.jobs({ queue: "kept" });
      expect(keptJobs.map((job) => job.jobId)).toEqual([kept.jobId, 12]);
      const again = yield* first.insert({ queue: "kept", worker: "W", args: "again" });
      expect(again.jobId).toBe(13);
    }),
  );
});
