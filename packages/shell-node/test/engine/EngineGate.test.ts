// Proves how the engine's command queue waits on a log that holds its appends (`Gated`, as the
// PostgreSQL log does while it compacts) or refuses them: nothing is decided while the gate is
// shut, a waiting claim given up meanwhile is answered at once with no job, a gate shut a second
// time is waited for again, and the drain that finds the log refusing refuses the parked claims
// too. The log is the shared in-memory log with an admission a test sets; each step waits for the
// queue's microtasks with one macrotask hop, no timer.
import { describe, expect, it } from "@effect/vitest";
import { Deferred, Effect, Exit, FiberId } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import type * as Log from "../../src/log/Log.js";
import { type LogError, StoreClosed } from "../../src/log/LogError.js";
import * as SharedLog from "../support/sharedLog.js";

const job = { queue: "q", worker: "W", args: null };
const lane = [{ queue: "q", limit: 1 }];

/**
 * An engine on a fresh shared log whose admission answers `Gated` between
 * `shut` and `open`, and `Refused` (the log closed) from `refuse` on.
 */
const gatedEngine = Effect.gen(function* () {
  const recovered = yield* SharedLog.open(SharedLog.shared());
  let admission: Log.Admission<LogError> | undefined;
  const log: Log.Log<SharedLog.SharedKind> = {
    ...recovered.log,
    admission: () => admission ?? recovered.log.admission(),
  };
  const engine = yield* Engine.fromLog(
    { ...recovered, log },
    { timers: false, rescueOnOpen: false },
  );
  const shut = () => {
    admission = { _tag: "Gated", gate: Deferred.unsafeMake<void>(FiberId.none) };
  };
  const open = () => {
    const shutGate = admission;
    admission = undefined;
    if (shutGate?._tag === "Gated") Deferred.unsafeDone(shutGate.gate, Exit.void);
  };
  const refuse = () => {
    admission = { _tag: "Refused", error: new StoreClosed({ path: log.view.path }) };
  };
  return { engine, shut, open, refuse };
});

/** Whether `promise` has settled yet, read synchronously. */
const watched = <A>(promise: Promise<A>) => {
  const seen: { settled: boolean; value: A | undefined } = { settled: false, value: undefined };
  void promise.then((value) => {
    seen.settled = true;
    seen.value = value;
  });
  return seen;
};

/** One macrotask hop: every microtask queued before it (drains, answers) has run. */
const hop = Effect.promise(() => new Promise((resolve) => setImmediate(resolve)));

describe("a log that holds appends", () => {
  it.scoped("answers a waiting claim given up while the gate is shut at once, with no job", () =>
    Effect.gen(function* () {
      const { engine, shut, open } = yield* gatedEngine;
      shut();
      const beforeDrain = new AbortController();
      const afterDrain = new AbortController();
      const insert = engine.promises.insert(job);
      const inserting = watched(insert);
      // Given up in the turn it was issued: the drain that meets the gate finds it aborted.
      const first = watched(engine.promises.nextJobs(lane, { signal: beforeDrain.signal }));
      beforeDrain.abort();
      // Queued before that drain, given up after it.
      const second = watched(engine.promises.nextJobs(lane, { signal: afterDrain.signal }));
      yield* hop;
      afterDrain.abort();
      yield* hop;
      expect([first.settled, first.value, second.settled, second.value]).toEqual([
        true,
        [],
        true,
        [],
      ]);
      // Nothing was decided: the insert waits for the gate.
      expect(inserting.settled).toBe(false);
      open();
      const inserted = yield* Effect.promise(() => insert);
      // Neither claim took the job.
      expect((yield* engine.job(inserted.jobId))?.state).toBe("available");
    }),
  );

  it.scoped("waits for a gate shut a second time as for the first", () =>
    Effect.gen(function* () {
      const { engine, shut, open } = yield* gatedEngine;
      for (const args of [1, 2]) {
        shut();
        const insert = engine.promises.insert({ ...job, args });
        const seen = watched(insert);
        yield* hop;
        expect(seen.settled).toBe(false);
        open();
        expect((yield* Effect.promise(() => insert)).args).toBe(args);
      }
    }),
  );

  it.scoped("refuses every parked claim once a drain finds the log refusing appends", () =>
    Effect.gen(function* () {
      const { engine, refuse } = yield* gatedEngine;
      const parked = watched(
        engine.promises.nextJobs(lane).then(
          () => "answered",
          (error: unknown) => error,
        ),
      );
      yield* hop;
      refuse();
      const insert = engine.promises.insert(job).then(
        () => "inserted",
        (error: unknown) => error,
      );
      expect(yield* Effect.promise(() => insert)).toBeInstanceOf(StoreClosed);
      yield* hop;
      // The claim parked before would never wake: the same drain refused it.
      expect(parked.value).toBeInstanceOf(StoreClosed);
    }),
  );
});
