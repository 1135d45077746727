// Progress reports on a real store: the engine holds the latest report of an executing attempt
// (both faces), refuses one for an attempt that is not executing (`StaleAttempt`) or a value that
// is not one, lets a report go when its attempt's end commits (however it ends), appends nothing,
// and a reopen holds none.
import { Event } from "@tay/core";
import { Effect, Either } from "effect";
import { describe, expect, it } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import { ProgressBoard } from "../../src/engine/internal/progressBoard.js";
import { Rejected } from "../../src/engine/internal/engineRequest.js";
import { tempStores } from "../support/tempStores.js";

const stores = tempStores("progress");
const freshDirectory = stores.directory;

const open = (directory: string) =>
  EnginePromises.open(directory, { createIfMissing: true, timers: false });

const refusal = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise;
  } catch (error) {
    return error instanceof Rejected ? error.rejection._tag : error;
  }
  return "held";
};

describe("engine progress", () => {
  it("holds the latest report of the executing attempt, and none once it ends", async () => {
    const engine = await open(freshDirectory());
    try {
      const { jobId } = await engine.insert({ queue: "q", worker: "W", args: null });
      expect(await refusal(engine.reportProgress(jobId, 1, 10))).toBe("StaleAttempt");
      const [job] = await engine.claim("q", 1);
      expect(job?.attempt).toBe(1);
      const before = (await Effect.runPromise(engine.log.stats())).lastSequence;
      await engine.reportProgress(jobId, 1, { done: 1 });
      await engine.reportProgress(jobId, 1, { done: 2, of: 4 });
      expect(engine.progress(jobId)).toMatchObject({
        jobId,
        attempt: 1,
        value: new Map([
          ["done", 2],
          ["of", 4],
        ]),
      });
      expect(engine.progresses().map((progress) => progress.jobId)).toEqual([jobId]);
      // Nothing is appended for a report.
      expect((await Effect.runPromise(engine.log.stats())).lastSequence).toBe(before);
      expect(await refusal(engine.reportProgress(jobId, 2, 1))).toBe("StaleAttempt");
      expect(await refusal(engine.reportProgress(jobId + 1, 1, 1))).toBe("JobNotFound");
      expect(await refusal(engine.reportProgress(jobId, 1, { at: new Date(0) }))).toBe(
        "InvalidField",
      );
      expect(await refusal(engine.reportProgress(jobId, 1, "x".repeat(70_000)))).toBe("TooLarge");
      // A refused report leaves the one held.
      expect(engine.progress(jobId)?.value).toEqual(
        new Map([
          ["done", 2],
          ["of", 4],
        ]),
      );
      await engine.complete(jobId, undefined, { attempt: 1 });
      expect(engine.progress(jobId)).toBeUndefined();
      expect(engine.progresses()).toEqual([]);
      expect(await refusal(engine.reportProgress(jobId, 1, 3))).toBe("StaleAttempt");
    } finally {
      await engine.close();
    }
  });

  it("shows no report of an earlier attempt, and a reopen holds none", async () => {
    const directory = freshDirectory();
    const engine = await open(directory);
    let jobId = 0;
    try {
      jobId = (await engine.insert({ queue: "q", worker: "W", args: null, maxAttempts: 3 })).jobId;
      await engine.claim("q", 1);
      await engine.reportProgress(jobId, 1, "first");
      await engine.fail(jobId, "boom", { attempt: 1, backoff: { baseMs: 0, factor: 1, capMs: 0 } });
      await engine.tick();
      const [again] = await engine.claim("q", 1);
      expect(again?.attempt).toBe(2);
      expect(engine.progress(jobId)).toBeUndefined();
      await engine.reportProgress(jobId, 2, "second");
      expect(engine.progress(jobId)?.value).toBe("second");
    } finally {
      await engine.close();
    }
    const reopened = await EnginePromises.open(directory, { timers: false, rescueOnOpen: false });
    try {
      expect(reopened.job(jobId)?.state).toBe("executing");
      expect(reopened.progress(jobId)).toBeUndefined();
    } finally {
      await reopened.close();
    }
  });

  it("tells each report held to its watchers, not a refused one, until unwatched", async () => {
    const engine = await open(freshDirectory());
    try {
      const { jobId } = await engine.insert({ queue: "q", worker: "W", args: null });
      await engine.claim("q", 1);
      const told: Array<unknown> = [];
      const unwatch = engine.watchProgress((progress) => told.push(progress.value));
      await engine.reportProgress(jobId, 1, 1);
      await engine.reportProgress(jobId, 2, 2).catch(() => undefined);
      await engine.reportProgress(jobId, 1, { bad: new Date(0) }).catch(() => undefined);
      await engine.reportProgress(jobId, 1, 3);
      unwatch();
      await engine.reportProgress(jobId, 1, 4);
      expect(told).toEqual([1, 3]);
    } finally {
      await engine.close();
    }
  });

  it("holds a report whose watcher throws, leaving the watcher's error unhandled", async () => {
    const engine = await open(freshDirectory());
    // Vitest's own listener fails the run on an unhandled rejection: this one is expected.
    const listeners = process.listeners("unhandledRejection");
    process.removeAllListeners("unhandledRejection");
    const unhandled: Array<unknown> = [];
    process.on("unhandledRejection", (reason) => unhandled.push(reason));
    try {
      const { jobId } = await engine.insert({ queue: "q", worker: "W", args: null });
      await engine.claim("q", 1);
      const told: Array<unknown> = [];
      engine.watchProgress(() => {
        throw new Error("the watcher's own bug");
      });
      engine.watchProgress((progress) => told.push(progress.value));
      await engine.reportProgress(jobId, 1, "held");
      expect(engine.progress(jobId)?.value).toBe("held");
      expect(told).toEqual(["held"]);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([new Error("the watcher's own bug")]);
    } finally {
      process.removeAllListeners("unhandledRejection");
      for (const listener of listeners) process.on("unhandledRejection", listener);
      await engine.close();
    }
  });

  it("answers on the Effect face too, failing with Rejected", async () => {
    const engine = await open(freshDirectory());
    try {
      const { jobId } = await engine.insert({ queue: "q", worker: "W", args: null });
      await engine.claim("q", 1);
      const effects = engine.engine;
      const stale = await Effect.runPromise(Effect.either(effects.reportProgress(jobId, 2, 1)));
      expect(Either.isLeft(stale) && stale.left.rejection._tag).toBe("StaleAttempt");
      await Effect.runPromise(effects.reportProgress(jobId, 1, [1, 2]));
      expect((await Effect.runPromise(effects.progress(jobId)))?.value).toEqual([1, 2]);
      expect(await Effect.runPromise(effects.progresses())).toHaveLength(1);
    } finally {
      await engine.close();
    }
  });
});

describe("ProgressBoard", () => {
  it("lets go of a report when a committed batch ends its attempt, alone or in a mutation", async () => {
    const engine = await open(freshDirectory());
    try {
      const jobs = await engine.insertMany(
        [1, 2, 3, 4].map(() => ({ queue: "q", worker: "W", args: null })),
      );
      await engine.claim("q", 4);
      const state = engine.state();
      const board = new ProgressBoard();
      for (const { jobId } of jobs) {
        expect(board.report(state, { jobId, attempt: 1, value: jobId, at: 0 })).toBeUndefined();
      }
      const [a, b, c, d] = jobs.map((job) => job.jobId);
      board.ended([
        {
          sequence: 10,
          event: Event.jobFinished({ jobId: a ?? 0, at: 0, outcome: "completed", error: null }),
        },
        {
          sequence: 11,
          event: Event.mutation([
            Event.jobRetried({ jobId: b ?? 0, at: 0, retryAt: 0, error: "e" }),
            Event.jobCancelled({ jobId: c ?? 0, at: 0, reason: null }),
          ]),
        },
        { sequence: 12, event: Event.jobAvailable({ jobId: d ?? 0, at: 0 }) },
      ]);
      expect(board.size).toBe(1);
      expect(board.of(state, d ?? 0)?.value).toBe(d);
    } finally {
      await engine.close();
    }
  });

  it("sweeps out reports whose ends it never read once it has doubled", async () => {
    const engine = await open(freshDirectory());
    try {
      const jobs = await engine.insertMany(
        Array.from({ length: 70 }, () => ({ queue: "q", worker: "W", args: null })),
      );
      await engine.claim("q", 70);
      const board = new ProgressBoard();
      const ids = jobs.map(({ jobId }) => jobId);
      for (const jobId of ids.slice(0, 63)) {
        expect(
          board.report(engine.state(), { jobId, attempt: 1, value: 0, at: 0 }),
        ).toBeUndefined();
      }
      // Their ends commit, and the board (watching nothing here) never reads them.
      await Promise.all(
        ids.slice(0, 63).map((jobId) => engine.complete(jobId, undefined, { attempt: 1 })),
      );
      expect(board.size).toBe(63);
      const last = ids[63] ?? 0;
      expect(
        board.report(engine.state(), { jobId: last, attempt: 1, value: 1, at: 0 }),
      ).toBeUndefined();
      expect(board.size).toBe(1);
      expect(board.of(engine.state(), last)?.value).toBe(1);
    } finally {
      await engine.close();
    }
  });

  it("holds nothing for an engine whose ends commit while reports are held (no leak)", async () => {
    const engine = await open(freshDirectory());
    try {
      const jobs = await engine.insertMany(
        Array.from({ length: 50 }, () => ({ queue: "q", worker: "W", args: null })),
      );
      await engine.claim("q", 50);
      for (const { jobId } of jobs) await engine.reportProgress(jobId, 1, jobId);
      expect(engine.progresses()).toHaveLength(50);
      expect(engine.progressHeld()).toBe(50);
      await Promise.all(jobs.map(({ jobId }) => engine.complete(jobId, undefined, { attempt: 1 })));
      expect(engine.progresses()).toEqual([]);
      expect(engine.progressHeld()).toBe(0);
    } finally {
      await engine.close();
    }
  });
});
