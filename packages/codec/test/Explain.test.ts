// Proves a refusal of the encoders reads as one line naming the event's pair, the payload inside
// a mutation, the field path (shortened past 8 segments, with its length) and the reason, for
// refusals the encoders really give: a message that names no field fails here.
import { Event, type Value } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import {
  appendRecord,
  encodeEvent,
  explainEncodeError,
  explainPath,
  recordBuffer,
} from "../src/index.js";

const insert = (args: Value.Value) =>
  Event.jobInserted({
    jobId: 7,
    queue: "q",
    worker: "W",
    args,
    priority: 0,
    maxAttempts: 1,
    scheduledAt: 0,
    insertedAt: 0,
  });

const explained = (event: Event.Event): string => {
  const encoded = encodeEvent(event);
  return E.isLeft(encoded) ? explainEncodeError(encoded.left) : "encoded";
};

describe("explainEncodeError", () => {
  it("names the pair, the field path and the reason", () => {
    expect(explained(insert(new Map([["n", Number.NaN]])))).toBe(
      "event (1,1): a non-finite number (NaN) at args.n",
    );
    expect(explained(insert([1, 2n ** 64n]))).toBe(
      `event (1,1): an integer outside int64 (${2n ** 64n}) at args[1]`,
    );
    expect(explained(insert("\ud800"))).toBe(
      "event (1,1): a lone surrogate at UTF-16 index 0 of a string at args",
    );
  });

  it("names the payload inside a mutation", () => {
    const mutation = Event.mutation([insert(null), insert(Number.POSITIVE_INFINITY)]);
    expect(explained(mutation)).toMatch(
      /^event \(1,1\) events\[1\]\.payload: a non-finite number \(Infinity\) at args$/,
    );
  });

  it("shortens a deep path, keeping its ends and its length", () => {
    let args: Value.Value = "leaf";
    for (let level = 0; level < 64; level++) args = [args];
    expect(explained(insert(args))).toBe(
      "event (1,1): nested deeper than 64 levels at args[0][0][0][0][0]…[0][0] (64 levels)",
    );
    expect(explainPath([])).toBe("");
    expect(explainPath(["jobs", 3, "args", "a"])).toBe("jobs[3].args.a");
    expect(explainPath([0, "k"])).toBe("[0].k");
  });

  it("names a record field out of its range", () => {
    const appended = appendRecord(recordBuffer(64), {
      type: 0,
      schema: 1,
      sequence: 1,
      payload: new Uint8Array(0),
    });
    if (E.isRight(appended)) return expect.unreachable("type 0 is refused");
    expect(explainEncodeError(appended.left)).toBe("record type 0 is outside 1..254");
  });
});
