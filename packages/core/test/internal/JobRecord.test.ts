// A job record holds its times as numbers it shares: `sharedTime` returns a
// number equal to its argument whatever came before (property), and records
// built by the fold's paths cost no 16-byte box per time (docs/core.md,
// "Times held as shared numbers"). Nothing in JavaScript tells a shared
// number from a boxed one, so the test weighs the records on V8's heap
// (`--expose-gc`, switched on for this process) after two collections.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as Event from "../../src/Event.js";
import * as Job from "../../src/Job.js";
import { sharedTime, timesTaggedShape } from "../../src/internal/JobRecord.js";
import { heapBytesPer } from "../support/Weigh.js";

const time = 1_800_000_000_000;
const records = 100_000;
// Jobs per millisecond: jobs inserted together share their time.
const perMillisecond = 16;

const insertedAt = (index: number): Job.Job =>
  Job.fromInserted(
    Event.jobInserted({
      jobId: index + 1,
      queue: "q",
      worker: "w",
      args: null,
      priority: 0,
      maxAttempts: 20,
      // Computed, so that every event holds a number of its own.
      scheduledAt: time + Math.floor(index / perMillisecond),
      insertedAt: time + Math.floor(index / perMillisecond),
    }),
  );

// Started in the millisecond it was inserted, as the times a running engine
// takes from its clock come in order.
const started = (index: number): Job.Job =>
  Job.applied(
    insertedAt(index),
    Event.jobStarted({
      jobId: index + 1,
      at: time + Math.floor(index / perMillisecond),
      attempt: 1,
    }),
  );

/** Bytes per record of `records` kept in an array (its slot included). */
const heldAfter = (build: (index: number) => Job.Job): number =>
  heapBytesPer(
    records,
    () => {
      const kept = new Array<Job.Job>(records);
      for (let index = 0; index < records; index++) kept[index] = build(index);
      return kept;
    },
    (kept) => expect(kept[records - 1]?.jobId).toBe(records),
  );

/**
 * Bytes on V8's heap per record that `build` makes, its array slot
 * included: the least of three weighings, as code compiled or dropped
 * during one weighs on it too.
 */
const bytesPerRecord = (build: (index: number) => Job.Job): number => {
  // Rounds before, for the optimizing compiler to take the paths over (it
  // unboxes and reboxes numbers where the interpreter does not).
  for (let round = 0; round < 3; round++) {
    for (let index = 0; index < records; index++) build(index);
  }
  return heldAfter(build);
};

// A record: 24 bytes of header and 8 a field (18 fields), 8 for its slot in
// the array; a box per time would add 16 each.
const recordBytes = 24 + 18 * 8 + 8;

describe("a record's times", () => {
  it("sharedTime returns its argument, whatever it was given before (property)", () => {
    const number = fc.oneof(
      fc.double(),
      fc.constantFrom(0, -0, Number.NaN, 2 ** 30, 2 ** 30 - 1, time, -time),
      fc.integer({ min: 0, max: 3 }).map((offset) => time + offset),
    );
    fc.assert(
      fc.property(fc.array(number, { minLength: 1, maxLength: 40 }), (numbers) => {
        for (const value of numbers) expect(Object.is(sharedTime(value), value)).toBe(true);
      }),
    );
  });

  it("the tagged shape has a record's keys in a record's order", () => {
    expect(Object.keys(timesTaggedShape)).toEqual(Object.keys(insertedAt(0)));
    expect(Object.keys(timesTaggedShape)).toEqual(Object.keys(started(0)));
  });

  it("an inserted job holds no box for its times", () => {
    expect(bytesPerRecord(insertedAt)).toBeLessThan(recordBytes + 8);
  });

  it("a started job holds no box for its times", () => {
    expect(bytesPerRecord(started)).toBeLessThan(recordBytes + 8);
  });

  it("an inserted job keeps each time as the event has it, -0 and 0 apart", () => {
    const event = (insertedAt: number, scheduledAt: number) =>
      Event.jobInserted({
        jobId: 1,
        queue: "q",
        worker: "w",
        args: null,
        priority: 0,
        maxAttempts: 1,
        scheduledAt,
        insertedAt,
      });
    for (const [inserted, scheduled] of [
      [0, -0],
      [-0, 0],
      [time, time],
      [time, time + 1],
    ] as const) {
      const job = Job.fromInserted(event(inserted, scheduled));
      expect(Object.is(job.insertedAt, inserted)).toBe(true);
      expect(Object.is(job.scheduledAt, scheduled)).toBe(true);
    }
  });

  it("times stay equal to the event's", () => {
    const job = started(40);
    expect(job.insertedAt).toBe(time + 2);
    expect(job.scheduledAt).toBe(time + 2);
    expect(job.attemptedAt).toBe(time + 2);
  });
});
