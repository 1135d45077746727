// Proves the last check of every copy (tay copy both ways, copy-prefix's import) refuses a copy that
// ends elsewhere or folds otherwise than its source, names both sides and says which differs, and
// accepts a copy that holds what its source holds. States are real folds of inserted jobs.
import { Generation, type State } from "@tay/core";
import { describe, expect, it } from "vitest";
import { copyMismatch, endMismatch } from "../../src/store/CopyCheck.js";
import { inserted } from "../support/store.js";

const names = { copy: "the written store", source: "the history given" };

/** The fold of jobs 1..count inserted. */
const folded = (count: number): State.State => {
  const builder = Generation.start(0);
  for (let jobId = 1; jobId <= count; jobId++) Generation.apply(builder, jobId, inserted(jobId));
  const state = Generation.finish(builder);
  if (state._tag === "Left") throw new Error("the fixture folds");
  return state.right;
};

describe("CopyCheck", () => {
  it("accepts a copy that ends where its source ends and folds to an equal state", () => {
    expect(
      copyMismatch(
        { lastSequence: 3, state: folded(3) },
        { lastSequence: 3, state: folded(3) },
        names,
      ),
    ).toBeUndefined();
    expect(endMismatch(7, 7, names)).toBeUndefined();
  });

  it("refuses a copy that ends elsewhere, naming both sequences", () => {
    const expected = "the written store ends at sequence 2, the history given at 3";
    expect(endMismatch(2, 3, names)).toBe(expected);
    expect(
      copyMismatch(
        { lastSequence: 2, state: folded(3) },
        { lastSequence: 3, state: folded(3) },
        names,
      ),
    ).toBe(expected);
  });

  it("refuses a copy that folds to another state, or does not fold", () => {
    expect(
      copyMismatch(
        { lastSequence: 3, state: folded(2) },
        { lastSequence: 3, state: folded(3) },
        names,
      ),
    ).toBe("the written store folds to another state than the history given");
    expect(
      copyMismatch(
        { lastSequence: 3, state: undefined },
        { lastSequence: 3, state: folded(3) },
        names,
      ),
    ).toBe("the written store does not fold");
    expect(
      copyMismatch(
        { lastSequence: 3, state: folded(3) },
        { lastSequence: 3, state: undefined },
        names,
      ),
    ).toBe("the history given does not fold");
    // With the fold's reason when the caller has it (the import's read back does).
    expect(
      copyMismatch(
        { lastSequence: 3, state: undefined, refusal: "job 2 is executing at the end" },
        { lastSequence: 3, state: folded(3) },
        names,
      ),
    ).toBe("the written store does not fold: job 2 is executing at the end");
  });
});
