// A job's history (core's `JobHistory`, what `tay job`, the server's route, the client and the
// dashboard show): the events that name the job, a schedule's delivery of it and the checkpoints
// that list it, each member of a mutation with its index, and a compaction's snapshot part
// narrowed to the job; nothing else.
import { Event, JobHistory } from "@tay/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkpoint,
  completed,
  definition,
  delivered,
  inserted,
  result,
  skipped,
  started,
} from "./support/Given.js";

const tags = (entries: ReadonlyArray<JobHistory.HistoryEntry>) =>
  entries.map(({ sequence, member, event }) => [sequence, member, event._tag]);

const job = (jobId: number): Event.JobSnapshot => ({
  jobId,
  queue: "q",
  worker: "W",
  args: `job ${jobId}`,
  priority: 0,
  maxAttempts: 3,
  attempt: 1,
  state: "completed",
  insertedAt: 1,
  scheduledAt: 1,
  attemptedAt: 2,
  finishedAt: 3,
  errors: [],
});

describe("a job's history", () => {
  it("takes the members of a mutation that name the job, each with its index", () => {
    const mutation = Event.mutation([completed(1), result(1), completed(2), result(2)]);
    expect(tags(JobHistory.entriesOf(7, mutation, 2))).toEqual([
      [7, 2, "JobFinished"],
      [7, 3, "ResultRecorded"],
    ]);
    expect(JobHistory.entriesOf(7, mutation, 3)).toEqual([]);
  });

  it("takes a record of its own that names the job, as member null", () => {
    expect(tags(JobHistory.entriesOf(4, inserted(5), 5))).toEqual([[4, null, "JobInserted"]]);
    expect(tags(JobHistory.entriesOf(4, started(5), 6))).toEqual([]);
  });

  it("takes a schedule's delivery of the job and a checkpoint listing it, not its other events", () => {
    const listing = checkpoint("s", { activeJobIds: [3, 9] });
    expect(tags(JobHistory.entriesOf(1, delivered("s", 1, 10, 20, 9), 9))).toEqual([
      [1, null, "OccurrenceAdvanced"],
    ]);
    expect(tags(JobHistory.entriesOf(2, listing, 9))).toEqual([[2, null, "ScheduleCheckpoint"]]);
    expect(JobHistory.entriesOf(2, listing, 4)).toEqual([]);
    expect(JobHistory.entriesOf(3, skipped("s", 1, 10, 20), 9)).toEqual([]);
    const registered = Event.scheduleRegistered({
      scheduleId: "s",
      definition: definition(),
      revision: 1,
      registeredAt: 0,
      nextDueAt: 9,
    });
    expect(JobHistory.entriesOf(3, registered, 9)).toEqual([]);
  });

  it("narrows a snapshot part of either schema to the job, and takes nothing from one without it", () =>
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 60 }),
        fc.boolean(),
        (jobIds, asked, v3) => {
          const jobs = jobIds.map(job);
          const v3Fields = { uniqueKey: null, uniquePeriodMs: null, timeoutMs: null };
          const part: Event.AnySnapshotPart = v3
            ? Event.snapshotPartV3({
                part: 0,
                lastJobId: 60,
                jobs: jobs.map((held) => ({ ...held, ...v3Fields })),
              })
            : Event.snapshotPart({ part: 0, lastJobId: 60, jobs });
          const entries = JobHistory.entriesOf(11, part, asked);
          const held = part.jobs.filter((one) => one.jobId === asked);
          expect(entries).toEqual(
            held.length === 0
              ? []
              : [{ sequence: 11, member: null, event: { ...part, jobs: held } }],
          );
          // The part itself is left as it was.
          expect(part.jobs).toHaveLength(jobIds.length);
        },
      ),
    ));

  it("names the ids a record inserts, alone or in a mutation, and none for any other record", () => {
    expect(JobHistory.insertedIds(inserted(5))).toEqual({ first: 5, last: 5 });
    const v3 = Event.jobInsertedV3({
      ...inserted(6),
      uniqueKey: "k",
      uniquePeriodMs: null,
      timeoutMs: null,
    });
    expect(JobHistory.insertedIds(v3)).toEqual({ first: 6, last: 6 });
    // A schedule's delivery: the insert beside the occurrence.
    const delivery = Event.mutation([inserted(9), delivered("s", 1, 10, 20, 9)]);
    expect(JobHistory.insertedIds(delivery)).toEqual({ first: 9, last: 9 });
    const batch = Event.mutation([inserted(3), v3, inserted(4), completed(1)]);
    expect(JobHistory.insertedIds(batch)).toEqual({ first: 3, last: 6 });
    expect(JobHistory.insertedIds(Event.mutation([completed(1), result(1)]))).toBeUndefined();
    expect(JobHistory.insertedIds(started(5))).toBeUndefined();
    expect(JobHistory.insertedIds(checkpoint("s", { activeJobIds: [3] }))).toBeUndefined();
    expect(
      JobHistory.insertedIds(Event.snapshotPart({ part: 0, lastJobId: 9, jobs: [job(9)] })),
    ).toBeUndefined();
  });
});
