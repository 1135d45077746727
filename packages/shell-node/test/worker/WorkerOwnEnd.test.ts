/**
 * The worker's watch of committed ends aborts a running handler whose
 * attempt someone else ended (a cancel, a rescue), never one whose end is
 * the worker's own: a handler that returned keeps an unaborted signal once
 * its completion is committed (work it left running on that signal, such as
 * a cleanup, is not cut short by its own success).
 */
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import * as Init from "../../src/store/Init.js";
import * as Worker from "../../src/worker/Worker.js";
import { dataDirectory, nodeDisk } from "../support/store.js";

/** Waits (real time, at most 10 s) until `done()` holds. */
const untilTrue = (done: () => boolean): Effect.Effect<void> =>
  Effect.gen(function* () {
    for (let tries = 0; tries < 1_000 && !done(); tries++) {
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)));
    }
    if (!done()) return yield* Effect.dieMessage("the condition never held");
  });

describe("the worker's own ends", () => {
  it.scopedLive("leave the signal of a handler that returned unaborted once committed", () =>
    Effect.gen(function* () {
      const dir = yield* dataDirectory;
      yield* Init.init(dir);
      const engine = yield* Engine.open(dir);
      const signals: Array<AbortSignal> = [];
      const events: Array<string> = [];
      yield* Worker.run(engine, {
        queues: { q: 1 },
        handlers: {
          Quick: (_job, { signal }) => {
            signals.push(signal);
            return "done";
          },
        },
        onEvent: (event) => events.push(event._tag),
      });
      yield* engine.insert({ queue: "q", worker: "Quick", args: null });
      yield* untilTrue(() => events.includes("Completed"));
      expect(events).toEqual(["Started", "Completed"]);
      expect(signals.map((signal) => signal.aborted)).toEqual([false]);
    }).pipe(Effect.provide(nodeDisk)),
  );
});
