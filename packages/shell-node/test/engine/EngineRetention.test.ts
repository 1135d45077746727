// The engine keeps the state it folded, not the fold that built it: once
// open, the recovered log's `Generation` builder (its array of every job id,
// 8 bytes a job; docs/core.md, "Memory of an active job") must be
// collectable. A closure made where the recovered log was in scope (the
// store writer's clock, the engine's own closures) kept it for the
// engine's life. Collections are asked of V8 (`--expose-gc`, switched on
// for this process); the builder is watched through a `WeakRef`.
import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import * as FileLog from "../../src/store/FileLog.js";
import * as Init from "../../src/store/Init.js";
import { foldProjection } from "../../src/store/StateProjection.js";
import { dataDirectory, nodeDisk } from "../support/store.js";

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

/** True once `ref`'s target is collected (a few rounds of collection and turns of the loop). */
const collected = async (ref: WeakRef<object>): Promise<boolean> => {
  for (let round = 0; round < 20; round++) {
    collect();
    if (ref.deref() === undefined) return true;
    await sleep(5);
  }
  return false;
};

describe("Engine retention", () => {
  it.scopedLive("lets go of the state it opened with once a commit replaces it", () =>
    Effect.gen(function* () {
      // The generators that build the engine held the open's state in their
      // context for the engine's life, and with it every version of the maps
      // since (every job present at open, the unique index's change records).
      const directory = yield* dataDirectory;
      yield* Init.init(directory);
      const engine = yield* Effect.flatMap(
        FileLog.open(directory, {}, foldProjection),
        (recovered) => Engine.fromLog(recovered, { timers: false }),
      );
      const opened = new WeakRef(yield* engine.state());
      const inserted = yield* engine.insert({ queue: "q", worker: "W", args: "x" });
      expect((yield* engine.state()).lastJobId).toBe(inserted.jobId);
      expect(yield* Effect.promise(() => collected(opened))).toBe(true);
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("lets go of the open's fold builder once it serves", () =>
    Effect.gen(function* () {
      const directory = yield* dataDirectory;
      yield* Init.init(directory);
      const watched: { builder?: WeakRef<object> } = {};
      const engine = yield* Effect.flatMap(
        FileLog.open(directory, {}, foldProjection),
        (recovered) => {
          watched.builder = new WeakRef(recovered.state);
          return Engine.fromLog(recovered, { timers: false });
        },
      );
      const inserted = yield* engine.insert({ queue: "q", worker: "W", args: "x" });
      const builder = watched.builder;
      if (builder === undefined) return expect.unreachable("the log was opened");
      expect(yield* Effect.promise(() => collected(builder))).toBe(true);
      // The engine still serves from the state it folded.
      expect((yield* engine.claim("q")).map((job) => job.jobId)).toEqual([inserted.jobId]);
    }).pipe(Effect.provide(nodeDisk)),
  );
});
