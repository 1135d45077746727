// Decoded integers that fit in 32 bits must come out as V8 small integers,
// not heap numbers, once the decoders are optimized: a heap number stored in
// a record's field turns that field into a boxed double for every record of
// the same shape (48 bytes more per active job: docs/core.md, "Memory of an
// active job"). Nothing in JavaScript tells the two apart, so the test asks
// V8 (`%IsSmi`, with natives syntax switched on for this process).
import { setFlagsFromString } from "node:v8";
import type { Event } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { decodeEventAt, encodeEvent } from "../../src/Event.js";

setFlagsFromString("--allow-natives-syntax");
const isSmall = new Function("value", "return %IsSmi(value)") as (value: unknown) => boolean;

// Enough decodes for the optimizing compiler to take the decoders over.
const warmDecodes = 100_000;

const lastDecoded = (event: Event.Event): Event.Event => {
  const encoded = encodeEvent(event);
  if (E.isLeft(encoded)) throw new Error(`refused ${event._tag}`);
  const { type, schema, payload } = encoded.right;
  let decoded: Event.Event | undefined;
  for (let round = 0; round < warmDecodes; round++) {
    const result = decodeEventAt(type, schema, payload, 0, payload.length);
    if (E.isRight(result)) decoded = result.right;
  }
  if (decoded === undefined) throw new Error(`did not decode ${event._tag}`);
  return decoded;
};

const time = 1_800_000_000_000;

describe("decoded 32-bit integers are small integers", () => {
  it("on the direct path (1,1)", () => {
    const decoded = lastDecoded({
      _tag: "JobInserted",
      jobId: 7,
      queue: "q",
      worker: "w",
      args: "x",
      priority: 3,
      maxAttempts: 20,
      scheduledAt: time,
      insertedAt: time,
    });
    if (decoded._tag !== "JobInserted") throw new Error(decoded._tag);
    expect([decoded.jobId, decoded.priority, decoded.maxAttempts].map(isSmall)).toEqual([
      true,
      true,
      true,
    ]);
    expect(decoded.insertedAt).toBe(time);
  });

  it("on the general path (1,3), negative values included", () => {
    const decoded = lastDecoded({
      _tag: "JobInsertedV3",
      jobId: 7,
      queue: "q",
      worker: "w",
      args: [-5, 2 ** 31 - 1, -(2 ** 31)],
      priority: 3,
      maxAttempts: 20,
      scheduledAt: time,
      insertedAt: time,
      uniqueKey: null,
      uniquePeriodMs: null,
      timeoutMs: 1_000,
    });
    if (decoded._tag !== "JobInsertedV3") throw new Error(decoded._tag);
    const small = [decoded.jobId, decoded.priority, decoded.maxAttempts, decoded.timeoutMs];
    expect(small.map(isSmall)).toEqual([true, true, true, true]);
    expect(decoded.args).toEqual([-5, 2 ** 31 - 1, -(2 ** 31)]);
    expect(Array.isArray(decoded.args) && decoded.args.every(isSmall)).toBe(true);
  });
});
