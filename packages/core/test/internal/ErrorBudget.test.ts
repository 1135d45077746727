// A job's kept errors are cut so that its snapshot always fits one record:
// a job that fails 1,000 times with 65,535-byte errors can still be
// compacted. Small errors are never touched, cuts never split a character,
// and a cut error says how much was cut.
import { Commands, Decide, Event, Evolve, Job, Limits, Snapshot, State } from "@tay/core";
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import { recordBytes } from "../../src/internal/Encoded.js";
import { jobSnapshotBytes, keptError, utf8Prefix } from "../../src/internal/ErrorBudget.js";

const encoder = new TextEncoder();
const bytesOf = (text: string) => encoder.encode(text).length;

/** Runs `command` against `state`: the decision must be accepted and fold. */
const run = (state: State.State, command: Commands.Command): State.State => {
  const decided = Decide.decide(state, command);
  if (Either.isLeft(decided)) throw new Error(`rejected: ${decided.left._tag}`);
  const next = Evolve.evolveAll(state, decided.right);
  if (Either.isLeft(next)) throw new Error(`refused: ${next.left.reason._tag}`);
  return next.right;
};

const hour = 3_600_000;

/** One job with `maxAttempts`, failed `failures` times with `error(attempt)`. */
const failedJob = (failures: number, error: (attempt: number) => string, args: string | null) => {
  let state = run(
    State.initialState,
    Commands.insertJobs({ now: 0, jobs: [{ queue: "q", worker: "W", args, maxAttempts: 1000 }] }),
  );
  for (let attempt = 1; attempt <= failures; attempt++) {
    const now = attempt * 2 * hour;
    state = run(state, Commands.makeDueAvailable({ now }));
    state = run(state, Commands.claimJobs({ now, queue: "q", limit: 1 }));
    state = run(state, Commands.failJob({ now, jobId: 1, error: error(attempt) }));
  }
  const job = State.job(state, 1);
  if (job === undefined) throw new Error("the job is gone");
  return { state, job };
};

describe("utf8Prefix", () => {
  it("is the longest prefix within the bound, never splitting a character", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 80 }),
        fc.nat({ max: 400 }),
        (text, bytesMax) => {
          const prefix = utf8Prefix(text, bytesMax);
          expect(text.startsWith(prefix)).toBe(true);
          expect(prefix.isWellFormed()).toBe(true);
          expect(bytesOf(prefix)).toBeLessThanOrEqual(bytesMax);
          if (prefix.length < text.length) {
            const point = text.codePointAt(prefix.length) ?? 0;
            expect(bytesOf(prefix) + bytesOf(String.fromCodePoint(point))).toBeGreaterThan(
              bytesMax,
            );
          }
        },
      ),
    );
  });
});

describe("kept errors", () => {
  it("keeps an error that fills the room exactly; with room for the note alone, the note", () => {
    // The room: a record less the snapshot and one error overhead (64 bytes) per attempt left.
    const roomOf = (job: Job.Job) => Limits.payloadBytesMax - jobSnapshotBytes(job) - 1000 * 64;
    const withRoom = (room: number): Job.Job => {
      const probe = failedJob(0, () => "", "").job;
      const { job } = failedJob(0, () => "", "x".repeat(roomOf(probe) - room));
      expect(roomOf(job)).toBe(room);
      return job;
    };
    const job = withRoom(100);
    expect(keptError(job, "e".repeat(100))).toBe("e".repeat(100));
    expect(keptError(job, "e".repeat(101))).toBe(`${"e".repeat(75)}…[cut 26 of 101 bytes]`);
    const note = "…[cut 1000 of 1000 bytes]";
    expect(keptError(withRoom(bytesOf(note)), "e".repeat(1000))).toBe(note);
  });

  it("leaves small errors as they are", () => {
    const { job } = failedJob(3, (attempt) => `boom ${attempt} é😀`, "args");
    expect(job.errors.map((error) => error.error)).toEqual([
      "boom 1 é😀",
      "boom 2 é😀",
      "boom 3 é😀",
    ]);
  });

  it("cuts the errors of a job that fails 300 times with 65,535 bytes, and its snapshot fits a record", () => {
    const long = (attempt: number) => `${attempt}:${"é".repeat(32_000)}${"x".repeat(1_500)}`;
    const { state, job } = failedJob(300, long, "x".repeat(1_000_000));
    expect(bytesOf(long(1))).toBeGreaterThan(65_000);
    expect(jobSnapshotBytes(job)).toBeLessThanOrEqual(Limits.payloadBytesMax);
    // The memoized estimate is the snapshot part's own.
    expect(jobSnapshotBytes(job)).toBe(
      recordBytes(Event.snapshotPart({ part: 0, lastJobId: 0, jobs: [Job.toSnapshot(job)] })),
    );
    const texts = job.errors.map((error) => error.error);
    // The first errors are kept whole, then one is cut with its note, then
    // the rest keep at most the note (or nothing).
    expect(texts[0]).toBe(long(1));
    const cut = texts.findIndex((text) => text !== long(texts.indexOf(text) + 1));
    expect(cut).toBeGreaterThan(100);
    expect(texts[cut]).toMatch(/…\[cut \d+ of 65\d{3} bytes\]$/);
    expect(long(cut + 1).startsWith(texts[cut]?.replace(/…\[cut .*$/, "") ?? "-")).toBe(true);
    for (const text of texts.slice(cut + 1)) expect(bytesOf(text)).toBeLessThan(64);
    // Compaction can write it: every part of the base is within a record.
    for (const record of Snapshot.snapshot(state, { now: 0, retentionMs: 0 })) {
      expect(recordBytes(record)).toBeLessThanOrEqual(Limits.payloadBytesMax);
    }
  });
});
