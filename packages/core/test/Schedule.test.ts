// The schedule record's helpers: the revision rule's next revision, the
// ascending active set, and the (13,2) round trip that snapshots and
// registrations rely on.
import { Schedule } from "@tay/core";
import { describe, expect, it } from "vitest";
import { checkpoint } from "./support/Given.js";

describe("Schedule", () => {
  const schedule = Schedule.fromCheckpoint(checkpoint("s", { revision: 4, activeJobIds: [2, 9] }));

  it("the next revision is current + 1, or 1 when new", () => {
    expect(Schedule.nextRevision(undefined)).toBe(1);
    expect(Schedule.nextRevision(schedule)).toBe(5);
  });

  it("keeps active_job_ids ascending and without duplicates", () => {
    expect(Schedule.withMember(schedule, 5).activeJobIds).toEqual([2, 5, 9]);
    expect(Schedule.withMember(schedule, 1).activeJobIds).toEqual([1, 2, 9]);
    expect(Schedule.withMember(schedule, 9)).toBe(schedule);
    expect(Schedule.withoutMember(schedule, 2).activeJobIds).toEqual([9]);
  });

  it("round-trips through its checkpoint", () => {
    expect(Schedule.toCheckpoint(schedule)).toEqual(
      checkpoint("s", { revision: 4, activeJobIds: [2, 9] }),
    );
    expect(
      Schedule.equals(Schedule.fromCheckpoint(Schedule.toCheckpoint(schedule)), schedule),
    ).toBe(true);
    expect(Schedule.isActive(schedule)).toBe(true);
  });
});
