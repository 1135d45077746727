/**
 * A fold that throws is a bug, never an operating error; these tests plant
 * one to see what the engine does with it. Core's batch fold is wrapped so
 * that it throws on a job whose args are "poison" (the generation fold of
 * an open is left alone).
 *
 * - Thrown while a later command of the same drain needs the inserts
 *   folded: nothing of the drain is queued, its callers die, and the engine
 *   goes on.
 * - Thrown by one command's decider after the inserts before it were folded
 *   (for a claim): that caller dies, and the drain goes on from the
 *   commands folded so far, the inserts among them.
 * - Thrown by the late fold, after the inserts' write was queued: the
 *   records are in the log, the engine cannot decide against a state that
 *   lacks them, so the batch's callers and every later command die with the
 *   defect. Reads keep the last committed state; a reopen folds the log.
 * - Thrown, or a refusal, by one command's fold after it changed the batch:
 *   that caller dies and the drain is folded again from the commands before
 *   it, so nothing of the failed command is decided on, committed or logged.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Init from "../../src/store/Init.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import { Effect } from "effect";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

vi.mock("@tay/core", async (importOriginal) => {
  const core = await importOriginal<typeof import("@tay/core")>();
  const poisoned = (events: Iterable<import("@tay/core").Event.Event>) =>
    [...events].some((event) => event._tag === "JobInserted" && event.args === "poison");
  // A pause of queue "tainted" or "refused": the fold applies it to the batch, then throws
  // or refuses a record after it (a bug that leaves part of a command in the batch).
  const tainting = (events: ReadonlyArray<import("@tay/core").Event.Event>) =>
    events.find((event) => event._tag === "QueueStateSet")?.queue;
  const batch: typeof core.Evolve.batch = (state) => {
    const run = core.Evolve.batch(state);
    return {
      evolveAll: (events) => {
        const list = [...events];
        if (poisoned(list)) throw new Error("planted fold bug");
        const tainted = tainting(list);
        if (tainted === "tainted") {
          run.evolveAll(list);
          throw new Error("planted fold bug after a change");
        }
        if (tainted === "refused") {
          // A start of a job that is not there: a genuine refusal, after the pause applied.
          return run.evolveAll([
            ...list,
            core.Event.jobStarted({ jobId: 1_000, at: 1, attempt: 1 }),
          ]);
        }
        return run.evolveAll(list);
      },
    };
  };
  // A decider that throws for a pause of queue "poison" (a bug in one command's decision).
  const decide: typeof core.Decide.decide = (state, command) => {
    if (command._tag === "SetQueueState" && command.queue === "poison") {
      throw new Error("planted decide bug");
    }
    return core.Decide.decide(state, command);
  };
  return {
    ...core,
    Evolve: { ...core.Evolve, batch },
    Decide: { ...core.Decide, decide },
  };
});

let directory = "";
beforeEach(async () => {
  directory = join(mkdtempSync(join(tmpdir(), "tay-fold-defect-")), "data");
  await Effect.runPromise(Effect.provide(Init.init(directory), NodeDisk.layer));
});
afterEach(() => {
  rmSync(join(directory, ".."), { recursive: true, force: true });
});

const job = (args: string) => ({ queue: "q", worker: "W", args });

const reason = (outcome: PromiseSettledResult<unknown>): string =>
  outcome.status === "rejected" && outcome.reason instanceof Error
    ? outcome.reason.message
    : outcome.status;

describe("Engine fold defects", () => {
  it("a throw while a later command needs the inserts: the drain dies, the engine goes on", async () => {
    const engine = await EnginePromises.open(directory, { durability: "Maximal" });
    const outcomes = await Promise.allSettled([
      engine.insert(job("a")),
      engine.insert(job("poison")),
      engine.claim("q"),
    ]);
    expect(outcomes.map(reason)).toEqual([
      "planted fold bug",
      "planted fold bug",
      "planted fold bug",
    ]);
    // Nothing of that drain was queued; the next commands decide as if it never was.
    const next = await engine.insert(job("b"));
    expect(next.jobId).toBe(1);
    expect((await engine.claim("q")).map((claimed) => claimed.jobId)).toEqual([1]);
    const log = await Effect.runPromise(engine.engine.log.readFrom(1, 100));
    expect(log.map((entry) => entry.event._tag)).toEqual(["JobInserted", "JobStarted"]);
    await engine.close();
  });

  it("a throw deciding a command after inserts another command folded: its caller dies, the drain goes on with the inserts", async () => {
    const engine = await EnginePromises.open(directory, { durability: "Maximal" });
    // The first claim folds the inserts before it; the throw puts the drain back to the
    // commands folded so far (the inserts and that claim), and the second claim decides on it.
    const outcomes = await Promise.allSettled([
      engine.insert(job("a")),
      engine.insert(job("b")),
      engine.claim("q"),
      engine.pauseQueue("poison"),
      engine.claim("q"),
    ]);
    expect(outcomes.map(reason)).toEqual([
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "planted decide bug",
      "fulfilled",
    ]);
    const claimed = outcomes.flatMap((outcome, index) =>
      outcome.status === "fulfilled" && (index === 2 || index === 4) && Array.isArray(outcome.value)
        ? [outcome.value.map((held: { readonly jobId: number }) => held.jobId)]
        : [],
    );
    expect(claimed).toEqual([[1], [2]]);
    await engine.close();
    const reopened = await EnginePromises.open(directory, {
      durability: "Maximal",
      rescueOnOpen: false,
    });
    expect(reopened.jobs().map((held) => [held.args, held.state])).toEqual([
      ["a", "executing"],
      ["b", "executing"],
    ]);
    await reopened.close();
  });

  it("a throw in the late fold: the batch and every later command die; the log keeps the records", async () => {
    const engine = await EnginePromises.open(directory, { durability: "Maximal" });
    await engine.insert(job("before"));
    const outcomes = await Promise.allSettled([
      engine.insert(job("a")),
      engine.insert(job("poison")),
    ]);
    expect(outcomes.map(reason)).toEqual(["planted fold bug", "planted fold bug"]);
    const later = await Promise.allSettled([engine.insert(job("c")), engine.claim("q")]);
    expect(later.map(reason)).toEqual(["planted fold bug", "planted fold bug"]);
    // Reads show what was committed before the defect.
    expect(engine.jobs().map((held) => held.args)).toEqual(["before"]);
    await engine.close();

    // The records were written; the generation fold of an open takes them.
    const reopened = await EnginePromises.open(directory, { durability: "Maximal" });
    expect(reopened.jobs().map((held) => held.args)).toEqual(["before", "a", "poison"]);
    await reopened.close();
  });

  it("a throw in the late fold kills the batch's riders too: a duplicate unique insert dies", async () => {
    const engine = await EnginePromises.open(directory, { durability: "Maximal" });
    const unique = { ...job("u"), uniqueKey: "k" };
    // Inserts only, one drain, all folded late: the duplicate rides on the first unique insert.
    const outcomes = await Promise.allSettled([
      engine.insert(job("poison")),
      engine.insert(unique),
      engine.insert({ ...unique, args: "again" }),
    ]);
    expect(outcomes.map(reason)).toEqual([
      "planted fold bug",
      "planted fold bug",
      "planted fold bug",
    ]);
    await engine.close();
  });

  it.each([
    ["throws", "tainted", "planted fold bug after a change"],
    ["refuses", "refused", "decider produced an illegal record: UnknownJob"],
  ])(
    "a fold that %s after changing the batch: the drain goes on from the state before that command",
    async (_, queue, died) => {
      const engine = await EnginePromises.open(directory, { durability: "Maximal" });
      // One drain: the pause's fold pauses the queue in the batch, then fails. The drain goes
      // back to the commands folded before it, so the claim after it finds the queue running.
      const outcomes = await Promise.allSettled([
        engine.insert({ queue, worker: "W", args: 1 }),
        engine.pauseQueue(queue),
        engine.claim(queue),
      ]);
      expect(outcomes.map(reason)).toEqual(["fulfilled", died, "fulfilled"]);
      const claimed = outcomes[2];
      expect(claimed?.status === "fulfilled" ? claimed.value : undefined).toMatchObject([
        { jobId: 1 },
      ]);
      // Nothing of the pause is in the committed state or the log.
      expect(engine.queues()).toEqual([]);
      await engine.close();
      const reopened = await EnginePromises.open(directory, {
        durability: "Maximal",
        rescueOnOpen: false,
      });
      expect(reopened.queues()).toEqual([]);
      expect(reopened.jobs().map((held) => held.state)).toEqual(["executing"]);
      await reopened.close();
    },
  );
});
