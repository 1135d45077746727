/**
 * The follower (docs/postgres.md, "Wake-ups across engines") on PGlite: a
 * follower whose session is found lost by its own poll (the driver had not
 * told it) reconnects and polls again at once, instead of sleeping a whole
 * `pollIntervalMs` with no session. Found as a 60 s time-out of
 * `EngineReconnect.test.ts` ("a follower whose session drops listens again
 * at once") in a loaded CI run, 2026-12-03.
 */
import type { PGlite } from "@electric-sql/pglite";
import { type Driver, PgLog, PgSchema } from "@tay/log-postgres";
import { Engine, StateProjection } from "@tay/shell-node";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { run } from "./support/events.js";
import * as Pglite from "./support/pglite.js";

const pglite = Pglite.perFile("f");
const database = (): PGlite => pglite.database();

const url = "postgres://tester@pglite.invalid:5432/memory";
const lost: Driver.Failure = {
  _tag: "DriverFailure",
  connection: true,
  code: "ECONNRESET",
  detail: "planted: the follower's connection is gone",
};

/**
 * `inner` whose follower session (the first whose first statement reads the
 * head: PGlite has no LISTEN, so the follower only polls) holds its first
 * poll until `release`, then answers it as a lost connection without
 * telling `onLost`, as a socket found broken by the statement would.
 */
const losingFollower = (inner: Driver.Driver) =>
  Pglite.holdingOnce(
    inner,
    (text, first) => first && text.startsWith("SELECT epoch, last_sequence"),
    () => lost,
  );

describe("a follower whose poll finds its session lost", () => {
  it("reconnects and polls at once: a parked claim wakes on another engine's insert", async () => {
    const shared = Pglite.driver(database());
    const losing = losingFollower(shared);
    const options = { schema: "follower", pollIntervalMs: 3_600_000 };
    await run(PgSchema.init(url, { ...options, driver: () => shared }));
    const woke = await run(
      Effect.gen(function* () {
        const open = (driver: Driver.Driver) =>
          Effect.flatMap(
            PgLog.open(url, { ...options, driver: () => driver }, StateProjection.foldProjection),
            (recovered) => Engine.fromLog(recovered, { timers: false, rescueOnOpen: false }),
          );
        const waiting = yield* open(losing.driver);
        const inserting = yield* open(shared);
        const claim = waiting.promises.nextJobs([{ queue: "q", limit: 1 }]);
        yield* Effect.promise(() => losing.holding);
        const job = yield* inserting.insert({ queue: "q", worker: "W", args: "while lost" });
        losing.release();
        // Without the prompt reconnection the next poll is an hour away.
        const started = yield* Effect.promise(() => claim).pipe(Effect.timeout("10 seconds"));
        return { started, job };
      }),
    );
    expect(woke.started.map((job) => job.jobId)).toEqual([woke.job.jobId]);
  }, 30_000);
});
