// EVENTS-V3.md's schedules in a time zone and catch-up policies as decider
// specifications: a registration with a zone is a (13,3) whose next due
// time is read in the zone; then, given a schedule that was down, each
// policy ("once", "skip", "all", with and without a window, overlap allow
// and skip) decides exactly these (11,2) records, legal for the fold.
import { Commands, Event } from "@tay/core";
import { describe, expect, it } from "vitest";
import { given, skipped } from "./support/Given.js";
import { checkpointV3, definitionV3 } from "./support/GivenV3.js";

const minute = 60_000;

/** A v3 interval schedule registered at 0, due every minute from 60,000. */
const every = (
  catchUp: Event.CatchUp,
  catchUpWindowMs: number | null,
  overlap: Event.Overlap = "allow",
) =>
  checkpointV3("s", {
    definition: definitionV3({
      timezone: "UTC",
      everyMs: minute,
      catchUp,
      catchUpWindowMs,
      overlap,
    }),
    nextDueAt: minute,
  });

const delivery = (jobId: number, revision: number, dueAt: number, nextDueAt: number, now: number) =>
  Event.mutation([
    Event.jobInserted({
      jobId,
      queue: "reports",
      worker: "Report",
      args: null,
      priority: 0,
      maxAttempts: 3,
      scheduledAt: dueAt,
      insertedAt: now,
    }),
    Event.occurrenceAdvanced({
      scheduleId: "s",
      revision,
      dueAt,
      nextDueAt,
      outcome: "delivered",
      activeJobId: jobId,
    }),
  ]);

/** A schedule's definition every minute, without any v3 field. */
const plainEveryMinute = {
  queue: "q",
  worker: "w",
  args: null,
  priority: 0,
  maxAttempts: 1,
  everyMs: minute,
  cron: null,
  overlap: "allow" as const,
};

describe("RegisterSchedule with a time zone", () => {
  it("is a (13,3) whose cron is read in the zone", () => {
    const definition = { ...definitionV3({ everyMs: null, cron: "30 2 * * *" }), args: null };
    // 2026-03-28T12:00Z: the next 02:30 in Berlin is 2026-03-29, in the gap: 03:00 CEST.
    const now = Date.UTC(2026, 2, 28, 12);
    given()
      .when(Commands.registerSchedule({ now, scheduleId: "s", definition }))
      .then(
        checkpointV3("s", {
          definition: definitionV3({ everyMs: null, cron: "30 2 * * *" }),
          registeredAt: now,
          nextDueAt: Date.UTC(2026, 2, 29, 1),
        }),
      );
  });

  it("without v3 fields stays a (13,2); an unknown zone is refused", () => {
    given()
      .when(
        Commands.registerSchedule({
          now: 0,
          scheduleId: "s",
          definition: { ...plainEveryMinute, timezone: "Mars/Base" },
        }),
      )
      .rejects("InvalidField", { field: "definition.timezone" });
  });
});

describe("RegisterSchedule with a catch-up field alone", () => {
  it("is a (13,3) that keeps the field, the zone UTC and the policy once", () => {
    given()
      .when(
        Commands.registerSchedule({
          now: 0,
          scheduleId: "s",
          definition: { ...plainEveryMinute, catchUpWindowMs: 5 * minute },
        }),
      )
      .then(
        checkpointV3("s", {
          definition: {
            ...plainEveryMinute,
            timezone: "UTC",
            catchUp: "once",
            catchUpWindowMs: 5 * minute,
          },
        }),
      );
  });
});

describe("catch-up after a downtime", () => {
  it('"once": one (11,2) for all missed occurrences', () => {
    given(every("once", null))
      .when(Commands.tick({ now: 10 * minute }))
      .then(delivery(1, 2, minute, 11 * minute, 10 * minute));
  });

  it('"skip", downtime longer than the window: the old ones skipped, the recent ones as once', () => {
    given(every("skip", null))
      .when(Commands.tick({ now: 10 * minute }))
      .then(
        skipped("s", 2, minute, 9 * minute),
        delivery(1, 3, 9 * minute, 11 * minute, 10 * minute),
      );
  });

  it('"skip", downtime shorter than the window: as once', () => {
    given(every("skip", 5 * minute))
      .when(Commands.tick({ now: 3 * minute }))
      .then(delivery(1, 2, minute, 4 * minute, 3 * minute));
  });

  it('"all" with no window: one (11,2) per occurrence, oldest first', () => {
    given(every("all", null))
      .when(Commands.tick({ now: 3 * minute }))
      .then(
        delivery(1, 2, minute, 2 * minute, 3 * minute),
        delivery(2, 3, 2 * minute, 3 * minute, 3 * minute),
        delivery(3, 4, 3 * minute, 4 * minute, 3 * minute),
      );
  });

  it('"all" with overlap skip: the first delivered, the others skipped by the overlap rule', () => {
    given(every("all", null, "skip"))
      .when(Commands.tick({ now: 3 * minute }))
      .then(
        delivery(1, 2, minute, 2 * minute, 3 * minute),
        skipped("s", 3, 2 * minute, 3 * minute),
        skipped("s", 4, 3 * minute, 4 * minute),
      );
  });

  it('"all" with a window: the old ones skipped in one (11,2), the recent ones each delivered', () => {
    given(every("all", 2 * minute))
      .when(Commands.tick({ now: 10 * minute }))
      .then(
        skipped("s", 2, minute, 8 * minute),
        delivery(1, 3, 8 * minute, 9 * minute, 10 * minute),
        delivery(2, 4, 9 * minute, 10 * minute, 10 * minute),
        delivery(3, 5, 10 * minute, 11 * minute, 10 * minute),
      );
  });

  it('"all" is bounded by the limit of the tick; the next tick goes on', () => {
    const state = given(every("all", null))
      .when(Commands.tick({ now: 3 * minute, limit: 2 }))
      .then(
        delivery(1, 2, minute, 2 * minute, 3 * minute),
        delivery(2, 3, 2 * minute, 3 * minute, 3 * minute),
      );
    expect(state.schedules.get("s")?.nextDueAt).toBe(3 * minute);
  });

  it('"all" delivers at most 1,000 occurrences per tick; the next tick goes on', () => {
    const now = 1_001 * minute;
    const deliveries = Array.from({ length: 1_000 }, (_, index) =>
      delivery(index + 1, index + 2, (index + 1) * minute, (index + 2) * minute, now),
    );
    const state = given(every("all", null))
      .when(Commands.tick({ now }))
      .then(...deliveries);
    expect(state.schedules.get("s")?.nextDueAt).toBe(now);
  });

  it("an occurrence due exactly at now - W is recent, not old", () => {
    given(every("skip", 9 * minute))
      .when(Commands.tick({ now: 10 * minute }))
      .then(delivery(1, 2, minute, 11 * minute, 10 * minute));
  });

  it("an occurrence due exactly at now is recent: the old ones are skipped up to it", () => {
    given(every("skip", minute / 2))
      .when(Commands.tick({ now: 10 * minute }))
      .then(
        skipped("s", 2, minute, 10 * minute),
        delivery(1, 3, 10 * minute, 11 * minute, 10 * minute),
      );
  });
});
