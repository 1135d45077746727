/**
 * How a waiting claim reads its lanes: a lane with a limit of 0 is passed
 * over (the claim takes from its other lanes, it is not refused for it); a
 * claim whose every lane has a limit of 0 is refused at once, though its
 * total is at least 1, rather than parked forever; and the total caps what
 * the lanes start together, the last lane taking only what the total has
 * left.
 */
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import { dataDirectory, nodeDisk } from "../support/store.js";

const job = (queue: string) => ({ queue, worker: "W", args: null });

const openEngine = Effect.gen(function* () {
  const dir = yield* dataDirectory;
  yield* Init.init(dir);
  return yield* Engine.open(dir, { timers: false });
});

/** Lets every fiber run until each waits on the clock or on a durable write. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)));

describe("a waiting claim's lanes", () => {
  it.scoped("with a limit of 0 are passed over: the claim starts jobs of its other lanes", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine;
      yield* engine.insert(job("a"));
      const inserted = yield* engine.insert(job("b"));
      const started = yield* engine.nextJobs([
        { queue: "a", limit: 0 },
        { queue: "b", limit: 1 },
      ]);
      expect(started.map((found) => found.jobId)).toEqual([inserted.jobId]);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("all with a limit of 0 refuse the claim at once, whatever its total", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine;
      let refusal: unknown;
      engine.promises.nextJobs([{ queue: "q", limit: 0 }], { limit: 1 }).then(
        () => {},
        (error: unknown) => {
          refusal = error;
        },
      );
      // Refused by its own drain: parked, it could never start a job (closing the
      // engine at the test's end would refuse it, and this expectation already failed).
      yield* settle;
      expect(refusal).toMatchObject({
        _tag: "Rejected",
        rejection: { _tag: "InvalidField", field: "lanes" },
      });
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scoped("start no more than the total together: the last lane takes what is left", () =>
    Effect.gen(function* () {
      const engine = yield* openEngine;
      yield* engine.insertMany([job("a"), job("a"), job("b"), job("b")]);
      const started = yield* engine.nextJobs(
        [
          { queue: "a", limit: 2 },
          { queue: "b", limit: 2 },
        ],
        { limit: 3 },
      );
      expect(started).toHaveLength(3);
      const executing = yield* engine.jobs({ state: "executing" });
      expect(executing).toHaveLength(3);
    }).pipe(Effect.provide(nodeDisk)),
  );
});
