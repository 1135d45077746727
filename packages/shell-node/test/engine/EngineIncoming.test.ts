/**
 * A log that takes jobs in from elsewhere (`Log.incoming`, PgLog's inbox)
 * tells the engine when some may be waiting, and the engine drains for
 * them although no command waits. Proved over the in-memory shared log with
 * an inbox added by hand: after the notice, the next drain takes the job,
 * appends it and tells the log its id, with no command issued. An incoming
 * job whose batch meets another writer's append is handed back to the log
 * (not appended this time), never decided again by the engine: the log
 * offers it again while it waits, so a retry would insert it twice.
 */
import { describe, expect, it } from "@effect/vitest";
import { Commands } from "@tay/core";
import { Effect } from "effect";
import * as Engine from "../../src/engine/Engine.js";
import type * as Log from "../../src/log/Log.js";
import * as SharedLog from "../support/sharedLog.js";

/** An inbox of jobs for the engine to take: `offer` queues one and tells the engine. */
const inbox = () => {
  const waiting: Array<Log.Incoming> = [];
  const listeners = new Set<() => void>();
  const outcomes = new Map<string, Log.IncomingOutcome>();
  let taken = 0;
  const incoming: Log.IncomingJobs = {
    watch: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    take: () => {
      taken += waiting.length;
      return waiting.splice(0);
    },
    settled: (key, outcome) => {
      outcomes.set(key, outcome);
    },
  };
  const offer = (key: string, command: Commands.InsertJobs) => {
    waiting.push({ key, command });
    for (const listener of listeners) listener();
  };
  return { incoming, offer, outcomes, taken: () => taken };
};

/** One macrotask later: every microtask queued before (a drain among them) has run. */
const nextTurn = Effect.promise(() => new Promise((resolve) => setImmediate(resolve)));

describe("an engine over a log with incoming jobs", () => {
  it.scoped("drains when the log says jobs wait, with no command issued", () =>
    Effect.gen(function* () {
      const recovered = yield* SharedLog.open(SharedLog.shared());
      const jobs = inbox();
      const log: Log.Log<SharedLog.SharedKind> = { ...recovered.log, incoming: jobs.incoming };
      const engine = yield* Engine.fromLog(
        { ...recovered, log },
        { timers: false, rescueOnOpen: false },
      );
      jobs.offer(
        "row-1",
        Commands.insertJobs({
          now: 0,
          jobs: [{ queue: "q", worker: "W", args: "from the inbox" }],
        }),
      );
      // The notice schedules a drain (a microtask): it has taken the job by the next turn,
      // and the in-memory log's write, microtasks too, has answered it.
      yield* nextTurn;
      expect(jobs.taken()).toBe(1);
      expect(jobs.outcomes.get("row-1")).toEqual({ _tag: "Appended", jobIds: [1] });
      expect((yield* engine.job(1))?.args).toBe("from the inbox");
    }),
  );

  it.scoped("hands a job back to the log when its batch meets another writer's append", () =>
    Effect.gen(function* () {
      const shared = SharedLog.shared();
      // Another engine appends right before this engine's first write: that write conflicts.
      const interloper = SharedLog.insertsOnce(shared);
      const recovered = yield* SharedLog.open(shared, { interloper });
      const jobs = inbox();
      const log: Log.Log<SharedLog.SharedKind> = { ...recovered.log, incoming: jobs.incoming };
      yield* Engine.fromLog({ ...recovered, log }, { timers: false, rescueOnOpen: false });
      jobs.offer(
        "row-1",
        Commands.insertJobs({ now: 0, jobs: [{ queue: "q", worker: "W", args: "ours" }] }),
      );
      // The drain, the refused write and the catch-up after it all run by then.
      for (let turn = 0; turn < 5; turn++) yield* nextTurn;
      expect(jobs.outcomes.get("row-1")?._tag).toBe("NotAppended");
      // Only the other writer's record: the engine did not append the job on its own retry.
      expect(shared.entries.map((entry) => entry.sequence)).toEqual([1]);
    }),
  );
});
