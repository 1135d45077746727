/**
 * The attempts a worker holds, against a naive model (a list): whatever
 * order attempts of a few jobs are added and let go in, the count, each
 * job's attempts (newest first) and all of them agree with the list. Two
 * attempts of one job are both held (until 2026-12-07 the newer replaced
 * the older); letting go one not held changes nothing.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Attempt } from "../../src/worker/internal/attempt.js";
import { HeldAttempts } from "../../src/worker/internal/heldAttempts.js";
import { insertedJob } from "../support/job.js";

type Step =
  | { readonly add: true; readonly jobId: number }
  | { readonly add: false; readonly pick: number };

const steps = fc.array(
  fc.oneof(
    fc.record({ add: fc.constant(true as const), jobId: fc.integer({ min: 1, max: 3 }) }),
    fc.record({ add: fc.constant(false as const), pick: fc.nat(20) }),
  ),
  { maxLength: 40 },
);

describe("the attempts a worker holds", () => {
  it("agree with a list of them, whatever is added and let go", () => {
    fc.assert(
      fc.property(steps, (plan: ReadonlyArray<Step>) => {
        const held = new HeldAttempts();
        let model: Array<Attempt> = [];
        const made: Array<Attempt> = [];
        for (const step of plan) {
          if (step.add) {
            const attempt = new Attempt({
              ...insertedJob(),
              jobId: step.jobId,
              attempt: made.filter((a) => a.job.jobId === step.jobId).length + 1,
            });
            made.push(attempt);
            held.add(attempt);
            model.push(attempt);
          } else {
            // Any attempt made so far, held or not: one let go twice is ignored.
            const attempt = made[step.pick % Math.max(1, made.length)];
            if (attempt === undefined) continue;
            held.delete(attempt);
            model = model.filter((a) => a !== attempt);
          }
          expect(held.size).toBe(model.length);
          for (const jobId of [1, 2, 3]) {
            const ofJob = model.filter((a) => a.job.jobId === jobId);
            expect([...held.ofJob(jobId)].map((a) => a.job.attempt)).toEqual(
              ofJob.map((a) => a.job.attempt).sort((x, y) => y - x),
            );
          }
          expect(new Set(held.values())).toEqual(new Set(model));
        }
      }),
    );
  });
});
