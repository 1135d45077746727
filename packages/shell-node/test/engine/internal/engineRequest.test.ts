// A queued command answers its caller once its batch ends: with the answer read from the state
// after its records, with the batch's failure, and with a defect, never a success, when that
// answer is missing (a bug: its job is not in the state, or it was never accepted). Requests are
// made directly, with a claim as their command and the empty state; no engine runs.
import { Commands, State } from "@tay/core";
import { describe, expect, it } from "vitest";
import { Missing, PromiseRequest } from "../../../src/engine/internal/engineRequest.js";

const command = Commands.claimJobs({ now: 0, queue: "q", limit: 1 });

/** A promise request whose answer is `answer`, and its promise's outcome once settled. */
const request = (answer: number | Missing) => {
  let resolve: (value: number) => void = () => undefined;
  let reject: (reason: unknown) => void = () => undefined;
  const outcome = new Promise<number>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  }).then(
    (value) => ({ _tag: "Answered" as const, value }),
    (reason: unknown) => ({ _tag: "Failed" as const, reason }),
  );
  const pending = new PromiseRequest<number, Error>(
    command,
    () => answer,
    undefined,
    (value) => resolve(value),
    (reason) => reject(reason),
  );
  return { pending, outcome };
};

describe("a queued command's answer", () => {
  it("is the answer read at its acceptance, or the batch's failure", async () => {
    const answered = request(7);
    answered.pending.accept(State.initialState, []);
    answered.pending.settle(undefined);
    expect(await answered.outcome).toEqual({ _tag: "Answered", value: 7 });
    const failed = request(7);
    const failure = new Error("the batch failed");
    failed.pending.accept(State.initialState, []);
    failed.pending.settle(failure);
    expect(await failed.outcome).toEqual({ _tag: "Failed", reason: failure });
  });

  it("is a defect that says so when the answer is missing, or was never read", async () => {
    const missing = request(new Missing("job 3 is not in the state"));
    missing.pending.accept(State.initialState, []);
    missing.pending.settle(undefined);
    const neverAccepted = request(7);
    neverAccepted.pending.settle(undefined);
    const outcomes = [await missing.outcome, await neverAccepted.outcome];
    expect(outcomes.map((outcome) => outcome._tag)).toEqual(["Failed", "Failed"]);
    expect(
      outcomes.map((outcome) =>
        outcome._tag === "Failed" && outcome.reason instanceof Error ? outcome.reason.message : "",
      ),
    ).toEqual(["job 3 is not in the state", "an accepted command has no answer"]);
  });
});
