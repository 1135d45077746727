// A handler's progress reports on an embedded engine: `context.progress` makes the engine hold the
// latest value while the attempt executes (gone once it ends); a value that is not one rejects
// with the engine's `Rejected` naming the path; a report from an attempt someone else ended
// resolves (its signal says so) instead of failing anything.
import { describe, expect, it } from "vitest";
import { Rejected } from "../../src/engine/internal/engineRequest.js";
import { tempStores, until } from "../support/tempStores.js";
import * as Worker from "../../src/worker/Worker.js";

const stores = tempStores("worker-progress");
const open = () => stores.open();

/** A promise and what settles it. */
const gate = () => {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
};

describe("context.progress", () => {
  it("is held by the engine while the attempt runs, and let go once it ends", async () => {
    const engine = await open();
    const release = gate();
    const worker = await Worker.start(engine, {
      queues: { q: 1 },
      handlers: {
        Import: async (_job, context) => {
          await context.progress({ rows: 10 });
          await context.progress({ rows: 20 });
          await release.opened;
          return "imported";
        },
      },
    });
    try {
      const { jobId } = await engine.insert({ queue: "q", worker: "Import", args: null });
      await until(() => engine.progress(jobId) !== undefined);
      expect(engine.progress(jobId)).toMatchObject({
        jobId,
        attempt: 1,
        value: new Map([["rows", 20]]),
      });
      release.open();
      await until(() => engine.job(jobId)?.state === "completed");
      expect(engine.progress(jobId)).toBeUndefined();
      expect(engine.progressHeld()).toBe(0);
    } finally {
      await worker.close();
      await engine.close();
    }
  });

  it("rejects a value that is not one, naming the path; the handler decides what follows", async () => {
    const engine = await open();
    const worker = await Worker.start(engine, {
      queues: { q: 1 },
      handlers: {
        Bad: async (_job, context) => {
          try {
            await context.progress({ step: { at: new Date(0) } });
            return "held";
          } catch (error) {
            return error instanceof Rejected ? error.message : "not Rejected";
          }
        },
      },
    });
    try {
      const { jobId } = await engine.insert({ queue: "q", worker: "Bad", args: null });
      await until(() => engine.job(jobId)?.state === "completed");
      expect(engine.job(jobId)?.result?.value).toMatch(/^InvalidField: progress\.step\.at: /);
    } finally {
      await worker.close();
      await engine.close();
    }
  });

  it("resolves a report from an attempt that someone else ended", async () => {
    const engine = await open();
    const told: Array<string> = [];
    const worker = await Worker.start(engine, {
      queues: { q: 1 },
      handlers: {
        Long: (_job, context) =>
          new Promise((_resolve, reject) => {
            context.signal.addEventListener("abort", () => {
              context.progress("after the cancel").then(
                () => told.push("resolved"),
                (error: unknown) => told.push(`rejected ${String(error)}`),
              );
              reject(context.signal.reason);
            });
          }),
      },
    });
    try {
      const { jobId } = await engine.insert({ queue: "q", worker: "Long", args: null });
      await until(() => engine.job(jobId)?.state === "executing");
      await engine.cancel(jobId, "no longer wanted");
      await until(() => told.length > 0);
      expect(told).toEqual(["resolved"]);
      expect(engine.progress(jobId)).toBeUndefined();
    } finally {
      await worker.close();
      await engine.close();
    }
  });
});
