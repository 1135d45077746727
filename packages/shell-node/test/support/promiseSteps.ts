/**
 * The steps the promise-face workloads of the terminal index's tests share
 * (`EngineTerminalIndex.test.ts`, `StateImage.test.ts`): an insert with or
 * without a unique key, and a claim that completes (with or without a
 * result) or fails the job it got.
 */
import type * as EnginePromises from "../../src/engine/EnginePromises.js";

/** Inserts a job of `queue` for step `index`, keyed when `key` is not null. */
export const insertStep = (
  engine: EnginePromises.OpenedEngine,
  queue: string,
  key: string | null,
  index: number,
  maxAttempts: number,
) =>
  engine.insert({
    queue,
    worker: "W",
    args: { index },
    maxAttempts,
    ...(key === null ? {} : { uniqueKey: key }),
  });

/** Claims one job of `queue`, if any, and fails it or completes it (a result when asked). */
export const endOneStep = async (
  engine: EnginePromises.OpenedEngine,
  queue: string,
  outcome: "complete" | "fail",
  result: boolean,
  index: number,
): Promise<void> => {
  const [job] = await engine.claim(queue, 1);
  if (job === undefined) return;
  if (outcome === "fail") await engine.fail(job.jobId, "boom");
  else await engine.complete(job.jobId, result ? { index } : undefined);
};
