/**
 * `jobMention`: every encoded event about a job holds it (what lets a
 * reader skip the decode of a record that lacks it), for every pair of the
 * contract: a job event, a result, an occurrence or historical checkpoint
 * naming the job as active, every job of a snapshot part, and the same
 * inside a mutation. A checkpoint's list of active jobs holds the key
 * `listedJobIdsKey` instead. Its bytes are fixed by FORMAT.md: pinned here.
 */
import type { Event } from "@tay/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as Events from "../../testkit/src/Events.js";
import { encodeEvent } from "../src/Event.js";
import { jobMention, listedJobIdsKey } from "../src/JobMention.js";

/** Whether `needle` occurs in `bytes`. */
const holds = (bytes: Uint8Array, needle: Uint8Array): boolean =>
  Buffer.from(bytes).indexOf(Buffer.from(needle)) >= 0;

/** The jobs an event names by one id (a list of them aside), and whether it lists some. */
const named = (event: Event.Event): { ids: Array<number>; lists: boolean } => {
  switch (event._tag) {
    case "Mutation": {
      const inner = event.events.map(named);
      return { ids: inner.flatMap((x) => x.ids), lists: inner.some((x) => x.lists) };
    }
    case "SnapshotPart":
    case "SnapshotPartV3":
      return { ids: event.jobs.map((job) => job.jobId), lists: false };
    case "ScheduleCheckpoint":
    case "ScheduleCheckpointV3":
      return { ids: [], lists: event.activeJobIds.length > 0 };
    default:
      if ("jobId" in event) return { ids: [event.jobId], lists: false };
      if ("activeJobId" in event && event.activeJobId !== null) {
        return { ids: [event.activeJobId], lists: false };
      }
      return { ids: [], lists: false };
  }
};

const everyEvent = fc.oneof(
  ...Object.values(Events.byTag).map((arbitrary) => arbitrary()),
  Events.mutationV3(),
);

describe("a job's mention", () => {
  it("is in the payload of every event about the job, and a list of ids has its key", () => {
    fc.assert(
      fc.property(everyEvent, (event) => {
        const encoded = encodeEvent(event);
        if (encoded._tag === "Left") return;
        const { ids, lists } = named(event);
        for (const jobId of ids) expect(holds(encoded.right.payload, jobMention(jobId))).toBe(true);
        if (lists) expect(holds(encoded.right.payload, listedJobIdsKey)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it("is not in the payload of an event about another job", () => {
    const withoutArgs = fc.oneof(
      Events.jobAvailable(),
      Events.jobStarted(),
      Events.jobFinished(),
      Events.jobCancelled(),
      Events.jobRetried(),
    );
    fc.assert(
      fc.property(withoutArgs, fc.integer({ min: 1, max: 2 ** 53 - 1 }), (event, other) => {
        fc.pre(other !== event.jobId);
        const encoded = encodeEvent(event);
        if (encoded._tag === "Left") return;
        expect(holds(encoded.right.payload, jobMention(other))).toBe(false);
      }),
    );
  });

  it("is `job_id`, the integer tag and 8 big-endian bytes", () => {
    const key = [0x6a, 0x6f, 0x62, 0x5f, 0x69, 0x64];
    expect([...jobMention(1)]).toEqual([...key, 0x03, 0, 0, 0, 0, 0, 0, 0, 1]);
    expect([...jobMention(2 ** 53 - 1)]).toEqual([...key, 0x03, 0, 0x1f, ...Array(6).fill(0xff)]);
    expect([...jobMention(0x1_0000_0002)]).toEqual([...key, 0x03, 0, 0, 0, 1, 0, 0, 0, 2]);
    expect([...listedJobIdsKey]).toEqual([
      0,
      0,
      0,
      14,
      ...new TextEncoder().encode("active_job_ids"),
    ]);
  });
});
