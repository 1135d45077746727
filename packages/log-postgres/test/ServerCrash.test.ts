/**
 * The server itself crashing: on a private cluster this test owns
 * (support/cluster.ts), an engine inserts batches from eight fibers at once
 * while the postmaster is SIGKILLed mid-storm; the engine's commands then
 * fail with the log's typed `ConnectionLost` (or, held behind a catch-up
 * whose read found no server, `DatabaseError`), and once the cluster is up
 * again (crash recovery) a reopen finds every acknowledged insert, every
 * batch whole or absent (never half of one), every row checked and folded,
 * and the store taking appends again. Runs with TAY_PG_CLUSTER=1; skipped,
 * with the reason printed, otherwise or when no cluster can be started.
 */
import { describe, expect, it } from "@effect/vitest";
import { Generation, type Job } from "@tay/core";
import { PgLog, PgSchema } from "@tay/log-postgres";
import { Engine, StateProjection } from "@tay/shell-node";
import { Effect } from "effect";
import pg from "pg";
import * as Cluster from "./support/cluster.js";

// Starting a cluster (and installing PostgreSQL where it is missing) is
// not for every `pnpm test`: .ci/run's PostgreSQL step asks for it.
const cluster =
  process.env.TAY_PG_CLUSTER === "1"
    ? await Cluster.privateCluster()
    : { skip: "the server crash test runs with TAY_PG_CLUSTER=1 (.ci/run sets it)" };
if ("skip" in cluster) console.warn(cluster.skip);

/** Jobs per batch: a batch is one insertMany, one transaction. */
const batchJobs = 3;
const fibers = 8;
/** Acknowledged batches before the kill: the storm is well under way. */
const batchesBeforeKill = 40;

/** What the storm saw: acknowledged batches (their job ids by key) and the failures' tags. */
interface Storm {
  readonly acknowledged: Map<string, ReadonlyArray<number>>;
  readonly failures: Array<{ readonly tag: string; readonly message: string }>;
}

/** One fiber: batches `fiber/round/index` until a command fails. */
const inserter = (engine: Engine.EngineService<PgLog.PgKind>, fiber: number, storm: Storm) =>
  Effect.gen(function* () {
    for (let round = 0; ; round++) {
      const key = `${fiber}/${round}`;
      const result = yield* Effect.either(
        engine.insertMany(
          Array.from({ length: batchJobs }, (_, index) => ({
            queue: "storm",
            worker: "W",
            args: `${key}/${index}`,
          })),
        ),
      );
      if (result._tag === "Left") {
        storm.failures.push({ tag: result.left._tag, message: result.left.message });
        return;
      }
      storm.acknowledged.set(
        key,
        result.right.map((job) => job.jobId),
      );
    }
  });

/** The store reopened: its state (every row checked and folded) and its report. */
const reopened = (url: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const recovered = yield* PgLog.open(url, {}, StateProjection.foldProjection);
      const state = Generation.finish(recovered.state);
      if (state._tag === "Left") return yield* Effect.die(state.left);
      return { state: state.right, report: recovered.report };
    }),
  );

/** The rows, their highest sequence and the head, read with plain SQL. */
const rawHead = async (url: string) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = await client.query(
      "SELECT count(*) AS rows, max(sequence) AS last FROM tay.tay_record",
    );
    const head = await client.query("SELECT last_sequence FROM tay.tay_current");
    return {
      rows: Number(rows.rows[0]?.rows),
      maxSequence: Number(rows.rows[0]?.last),
      head: Number(head.rows[0]?.last_sequence),
    };
  } finally {
    await client.end();
  }
};

/** The batch key of a storm job (`fiber/round`). */
const batchOf = (job: Job.Job): string =>
  typeof job.args === "string" ? job.args.slice(0, job.args.lastIndexOf("/")) : "";

describe.skipIf(!("url" in cluster))("the PostgreSQL server SIGKILLed mid-storm", () => {
  const owned = "url" in cluster ? cluster : undefined;

  it.live(
    "every acknowledged insert is there after the restart, no batch half-visible, the store verifies",
    () =>
      Effect.gen(function* () {
        if (owned === undefined) return;
        const { url } = owned;
        yield* PgSchema.init(url);
        const storm: Storm = { acknowledged: new Map(), failures: [] };
        yield* Effect.scoped(
          Effect.gen(function* () {
            // Few quick reconnections: the server stays down longer than they last.
            const recovered = yield* PgLog.open(
              url,
              { reconnectAttemptsMax: 2, reconnectDelayMs: 20 },
              StateProjection.foldProjection,
            );
            const engine = yield* Engine.fromLog(recovered, { timers: false });
            const running = Effect.all(
              Array.from({ length: fibers }, (_, fiber) => inserter(engine, fiber, storm)),
              { concurrency: "unbounded" },
            );
            const killer = Effect.gen(function* () {
              // (A storm that failed before the kill is reported by the checks below.)
              while (storm.acknowledged.size < batchesBeforeKill && storm.failures.length === 0) {
                yield* Effect.sleep("5 millis");
              }
              if (storm.failures.length === 0) yield* Effect.promise(() => owned.crash());
            });
            yield* Effect.all([running, killer], { concurrency: "unbounded" });
            // The writer's session died with the server: the next append stops the log.
            const after = yield* Effect.flip(
              engine.insert({ queue: "storm", worker: "W", args: "late" }),
            );
            storm.failures.push({ tag: after._tag, message: after.message });
          }),
        ).pipe(Effect.ignore);
        expect(storm.failures.length).toBe(fibers + 1);
        // Each failure typed (listed whole when one is not, so it prints): a dropped
        // connection that could not be re-established while a transaction was in flight
        // (outcome unknown), or a read refused for want of a server (nothing committed:
        // the commands held behind the catch-up that the follower's lost session asked
        // for were never appended; 2 runs in 25 went that way).
        const where = /postgres:\/\/postgres@127\.0\.0\.1:\d+\/test#tay\.default/.source;
        const typed = new RegExp(
          `^(ConnectionLost ${where}: the connection dropped|(ECONNREFUSED|57P0[123]|08[0-9A-Z]{3}) ${where}: (refresh|read) failed)`,
        );
        expect(storm.failures.filter((failure) => !typed.test(failure.message))).toEqual([]);
        expect(storm.failures.at(-1)?.tag).toBe("ConnectionLost");
        yield* Effect.promise(() => owned.start());

        const { state, report } = yield* reopened(url);
        const jobs = [...state.jobs.values()];
        // Every acknowledged batch, whole, under the ids its insert answered.
        for (const [key, ids] of storm.acknowledged) {
          expect(ids.map((id) => state.jobs.get(id)?.args)).toEqual(
            ids.map((_, index) => `${key}/${index}`),
          );
        }
        // Nothing half-visible: a batch is all there or not at all (an unacknowledged one may be).
        const sizes = new Map<string, number>();
        for (const job of jobs) sizes.set(batchOf(job), (sizes.get(batchOf(job)) ?? 0) + 1);
        expect([...sizes.values()].filter((size) => size !== batchJobs)).toEqual([]);
        // One record per batch (an insertMany is one mutation), and the head covers exactly
        // the rows present: no transaction's rows without its head move, nor the reverse.
        expect(report.lastSequence).toBe(sizes.size);
        const raw = yield* Effect.promise(() => rawHead(url));
        expect(raw).toEqual({ rows: sizes.size, maxSequence: sizes.size, head: sizes.size });
        console.info(
          `server SIGKILLed after ${storm.acknowledged.size} acknowledged batches: ${sizes.size} batches in the store after recovery`,
        );

        // The store takes appends again, after the records that survived.
        const appended = yield* Effect.scoped(
          Effect.gen(function* () {
            const recovered = yield* PgLog.open(url, {}, StateProjection.foldProjection);
            const engine = yield* Engine.fromLog(recovered, { timers: false });
            return yield* engine.insert({ queue: "storm", worker: "W", args: "after" });
          }),
        );
        expect(appended.jobId).toBe(jobs.length + 1);
        expect((yield* reopened(url)).report.lastSequence).toBe(sizes.size + 1);
      }).pipe(Effect.ensuring(Effect.promise(() => owned?.destroy() ?? Promise.resolve()))),
    60_000,
  );
});
