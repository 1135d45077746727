// The read commands' catch-up at rest (`restTail.ts`): what the records after
// HEAD's state image let go of, held beside the index as HEAD left it. A
// completion and its result are one record in this engine's stores, so a
// result recorded after the image for a job the index already holds is
// written here by hand: another writer may record (10,2) on its own.
import { Event, Generation, Image, State } from "@tay/core";
import { formatStoreId } from "@tay/codec";
import type { TerminalIndex } from "@tay/shell-node";
import { describe, expect, it } from "vitest";
import { TailFold } from "../src/restTail.js";

const storeIdBytes = Uint8Array.from({ length: 16 }, (_, at) => at + 1);
const storeId = formatStoreId(storeIdBytes);
const manifest = {
  storeId: storeIdBytes,
  epoch: 1,
  parentEpoch: 0,
  firstSequence: 1,
  baseRecordCount: 0,
  createdAt: 0,
};

const insert = (jobId: number) =>
  Event.jobInserted({
    jobId,
    queue: "q",
    worker: "W",
    args: jobId,
    priority: 0,
    maxAttempts: 1,
    scheduledAt: 0,
    insertedAt: 0,
  });
const start = (jobId: number) => Event.jobStarted({ jobId, at: 1, attempt: 1 });
const finish = (jobId: number) =>
  Event.jobFinished({ jobId, at: 2, outcome: "completed", error: null });

/** The lean state of `events` from sequence 1, and the state image of it. */
const imageOf = (events: ReadonlyArray<Event.Event>): TerminalIndex.DecodedImage => {
  const builder = Generation.start(0, { lean: true });
  for (const [at, event] of events.entries()) {
    const applied = Generation.apply(builder, at + 1, event);
    if (applied._tag === "Left") throw new Error(`the fixture does not fold: ${applied.left._tag}`);
  }
  const state = Generation.finish(builder);
  if (state._tag === "Left") throw new Error("the fixture does not finish");
  return {
    storeId,
    epoch: 1,
    firstSequence: 1,
    lastSequence: events.length,
    baseRecordCount: 0,
    segments: [{ id: 1, records: events.length, end: 0, crc: 0 }],
    image: Image.of(state.right),
  };
};

describe("the tail at rest", () => {
  it("holds the jobs let go after the image whole, and the results recorded after it for jobs let go before", () => {
    const before = [insert(1), start(1), finish(1), insert(2), start(2)];
    const image = imageOf(before);
    const head = { storeId, epoch: 1, lastSequence: before.length, entriesBytes: 0 };
    const tailFold = new TailFold(head, image);
    const resumed = tailFold.projection.resume?.(manifest);
    if (resumed === undefined) return expect.unreachable("the image resumes");
    let builder = resumed.state;
    const after = [
      Event.resultRecorded({ jobId: 1, result: "late", at: 3 }),
      Event.mutation([finish(2), Event.resultRecorded({ jobId: 2, result: "two", at: 4 })]),
    ];
    for (const [at, event] of after.entries()) {
      const applied = tailFold.projection.apply(builder, before.length + 1 + at, event);
      if (applied._tag === "Left") return expect.unreachable("the tail folds");
      builder = applied.right;
    }
    const tail = tailFold.tail();
    expect(tail?.through).toBe(before.length);
    expect([...(tail?.jobs.keys() ?? [])]).toEqual([2]);
    expect(tail?.jobs.get(2)?.result).toEqual({ value: "two", at: 4 });
    expect([...(tail?.results.values() ?? [])]).toEqual([after[0]]);
    const finished = Generation.finish(builder);
    expect(finished._tag === "Right" && State.fact(finished.right, 1)?.hasResult).toBe(true);
  });

  it("collects nothing when the image is not taken, or a pass that resumed failed", () => {
    const image = imageOf([insert(1)]);
    const otherHead = { storeId, epoch: 1, lastSequence: 7, entriesBytes: 0 };
    const refused = new TailFold(otherHead, image);
    expect(refused.projection.resume?.(manifest)).toBeUndefined();
    expect(refused.tail()).toBeUndefined();
    const head = { storeId, epoch: 1, lastSequence: 1, entriesBytes: 0 };
    const restarted = new TailFold(head, image);
    expect(restarted.projection.resume?.(manifest)).toBeDefined();
    restarted.projection.start(manifest);
    expect(restarted.tail()).toBeUndefined();
  });
});
