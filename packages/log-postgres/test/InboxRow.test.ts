/**
 * An inbox row holds exactly the jobs of its enqueue call: for any jobs
 * (fast-check), the row decodes to a command the engine decides to the
 * same records as the call's own, after any last job id; the row is
 * refused exactly when the engine's decider refuses the call; decoding
 * never throws on any row; and the keys one process makes only increase,
 * whatever its clock does. No database: the rows are built in memory.
 */
import { decodeEvent, encodeEvent } from "@tay/codec";
import { type Commands, Decide, type Event, type Value } from "@tay/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeRow, encodeJobs, nextKey } from "../src/internal/inboxRow.js";

const name = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/);

const value: fc.Arbitrary<Value.Input> = fc.letrec<{ value: Value.Input }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.string(),
    fc.uint8Array({ maxLength: 8 }),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie("value"), { maxKeys: 3 }),
  ),
})).value;

const newJob: fc.Arbitrary<Commands.NewJob> = fc.record(
  {
    queue: fc.oneof(name, fc.constant("")),
    worker: name,
    args: value,
    priority: fc.integer({ min: -1, max: 10 }),
    maxAttempts: fc.integer({ min: 0, max: 30 }),
    scheduledAt: fc.integer({ min: 0, max: 2 ** 45 }),
    timeoutMs: fc.integer({ min: 0, max: 100_000 }),
  },
  { requiredKeys: ["queue", "worker", "args"] },
);

const now = fc.integer({ min: 0, max: 2 ** 44 });

/** The row the application's transaction would write for `encoded`. */
const rowOf = (at: number, encoded: { type: number; schema: number; payload: Uint8Array }) => ({
  id: nextKey(at),
  enqueued_at: String(at),
  event_type: encoded.type,
  event_schema: encoded.schema,
  payload: Buffer.from(encoded.payload),
});

describe("the inbox row", () => {
  it("decodes to a command decided to the call's own records, or is refused as the call is", () => {
    fc.assert(
      fc.property(
        now,
        fc.array(newJob, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        (at, jobs, lastJobId) => {
          const command: Commands.InsertJobs = { _tag: "InsertJobs", now: at, jobs };
          const direct = Decide.insertJobsAfter(lastJobId, command);
          const encoded = encodeJobs(at, jobs);
          if (!("payload" in encoded)) {
            expect(Decide.insertJobsAfter(0, command)._tag).toBe("Left");
            return;
          }
          expect(direct._tag).toBe("Right");
          const incoming = decodeRow(rowOf(at, encoded));
          if (typeof incoming === "string") throw new Error(incoming);
          expect(Decide.insertJobsAfter(lastJobId, incoming.command)).toEqual(direct);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses unique keys, naming the field", () => {
    const refused = encodeJobs(0, [{ queue: "q", worker: "W", args: null, uniqueKey: "k" }]);
    expect(refused).toMatchObject({ field: "jobs[0].uniqueKey" });
  });

  it("refuses unique periods too, naming the job and the field", () => {
    const refused = encodeJobs(0, [
      { queue: "q", worker: "W", args: null },
      { queue: "q", worker: "W", args: null, uniquePeriodMs: 1_000 },
    ]);
    expect(refused).toMatchObject({
      field: "jobs[1].uniquePeriodMs",
      reason: expect.stringMatching(/through the engine$/),
    });
  });

  it("refuses a row whose job is not job id 1 or holds a unique key", () => {
    const encoded = encodeJobs(5, [{ queue: "q", worker: "W", args: null, timeoutMs: 10 }]);
    if (!("payload" in encoded)) throw new Error(encoded.reason);
    const decoded = decodeEvent(encoded.type, encoded.schema, encoded.payload);
    if (decoded._tag === "Left" || decoded.right._tag !== "JobInsertedV3") {
      throw new Error("the call made no single JobInsertedV3");
    }
    const inserted = decoded.right;
    const rowWith = (event: Event.JobInsertedV3) => {
      const reencoded = encodeEvent(event);
      if (reencoded._tag === "Left") throw new Error(reencoded.left._tag);
      return rowOf(5, reencoded.right);
    };
    expect(typeof decodeRow(rowWith(inserted))).toBe("object");
    expect(decodeRow(rowWith({ ...inserted, jobId: 2 }))).toBe("its record job 1 has job id 2");
    expect(decodeRow(rowWith({ ...inserted, uniqueKey: "k" }))).toBe(
      "its record job 1 has a unique key",
    );
  });

  it("never throws on any row, and refuses what is not a row of jobs", () => {
    fc.assert(
      fc.property(
        fc.record({
          id: fc.oneof(fc.uuid(), fc.integer()),
          enqueued_at: fc.oneof(fc.string(), fc.integer({ min: -5, max: 5 })),
          event_type: fc.integer({ min: 0, max: 30 }),
          event_schema: fc.integer({ min: 0, max: 4 }),
          payload: fc.uint8Array({ maxLength: 64 }),
        }),
        (row) => {
          const decoded = decodeRow(row);
          expect(typeof decoded === "string" || decoded.command._tag === "InsertJobs").toBe(true);
        },
      ),
    );
    expect(
      decodeRow({
        id: "x",
        enqueued_at: "1",
        event_type: 2,
        event_schema: 1,
        payload: new Uint8Array(),
      }),
    ).toMatch(/does not decode/);
  });

  it("keys only increase within a process, whatever the clock does", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 ** 47 }), { minLength: 2, maxLength: 50 }),
        (times) => {
          const keys = times.map((time) => nextKey(time));
          for (let index = 1; index < keys.length; index++) {
            expect((keys[index] ?? "") > (keys[index - 1] ?? "")).toBe(true);
          }
        },
      ),
    );
  });
});
