// Cron read in a time zone (EVENTS-V3.md "Time zones"), checked two ways:
// the DST rules on the transition days of Europe/Berlin, America/New_York
// and Australia/Lord_Howe's half-hour shift, written out by hand; and a
// year of occurrences of several expressions in each zone against croner,
// a well-kept cron library, computed independently. croner agrees on every
// day but the transition days, where it follows other rules than the
// specification's (it skips a time in the gap, and fires a repeated time
// twice); there our answers are the hand-written ones above, and a check
// that no wall-clock time fires twice.
import { Cron, Zone } from "@tay/core";
import { Cron as Croner } from "croner";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";

const parse = (expression: string): Cron.Cron => {
  const parsed = Cron.parse(expression);
  if (Either.isLeft(parsed)) throw new Error(parsed.left.detail);
  return parsed.right;
};

const runs = (expression: string, zone: string, from: number, count: number): Array<string> => {
  const cron = parse(expression);
  const found: Array<string> = [];
  let after = from;
  for (let index = 0; index < count; index++) {
    const next = Zone.next(cron, zone, after);
    if (next === null) break;
    found.push(new Date(next).toISOString());
    after = next;
  }
  return found;
};

describe("the DST rules, by hand", () => {
  it("Europe/Berlin: 02:30 does not exist on 2026-03-29 and fires at 03:00 CEST", () => {
    expect(runs("30 2 * * *", "Europe/Berlin", Date.UTC(2026, 2, 27, 12), 3)).toEqual([
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:00:00.000Z",
      "2026-03-30T00:30:00.000Z",
    ]);
  });

  it("Europe/Berlin: 02:30 occurs twice on 2026-10-25 and fires once, at the earlier", () => {
    expect(runs("30 2 * * *", "Europe/Berlin", Date.UTC(2026, 9, 23, 12), 3)).toEqual([
      "2026-10-24T00:30:00.000Z",
      "2026-10-25T00:30:00.000Z",
      "2026-10-26T01:30:00.000Z",
    ]);
  });

  it("America/New_York: the repeated 01:00-01:59 on 2026-11-01 fires once per minute pattern", () => {
    expect(runs("*/30 1 * * *", "America/New_York", Date.UTC(2026, 10, 1, 4), 4)).toEqual([
      "2026-11-01T05:00:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:00:00.000Z",
      "2026-11-02T06:30:00.000Z",
    ]);
  });

  it("Australia/Lord_Howe: 02:15 falls in the half-hour gap of 2026-10-04 and fires at 02:30", () => {
    expect(runs("15 2 * * *", "Australia/Lord_Howe", Date.UTC(2026, 9, 3, 0), 2)).toEqual([
      "2026-10-03T15:30:00.000Z",
      "2026-10-04T15:15:00.000Z",
    ]);
  });

  it("every minute of a gap fires at the gap's end, whatever the minute", () => {
    for (let minute = 0; minute < 60; minute++) {
      const cron = parse(`${minute} 2 * * *`);
      // 03:00 CEST on 2026-03-29.
      expect(Zone.next(cron, "Europe/Berlin", Date.UTC(2026, 2, 28, 12))).toBe(
        Date.UTC(2026, 2, 29, 1),
      );
    }
    for (let minute = 0; minute < 30; minute++) {
      const cron = parse(`${minute} 2 * * *`);
      // 02:30 LHDT on 2026-10-04.
      expect(Zone.next(cron, "Australia/Lord_Howe", Date.UTC(2026, 9, 3, 0))).toBe(
        Date.UTC(2026, 9, 3, 15, 30),
      );
    }
  });

  it("America/New_York: after a time in the repeated hour's second pass, its earlier match has fired", () => {
    // 06:10Z is 01:10 EST, the second pass; 01:30 fired at 05:30Z (EDT), so next is the next day.
    expect(runs("*/30 1 * * *", "America/New_York", Date.UTC(2026, 10, 1, 6, 10), 1)).toEqual([
      "2026-11-02T06:00:00.000Z",
    ]);
  });

  it("UTC is Cron.next, and an unknown zone has no occurrence", () => {
    const cron = parse("0 3 * * *");
    expect(Zone.next(cron, "UTC", 0)).toBe(Cron.next(cron, 0));
    expect(Zone.next(cron, "Mars/Olympus_Mons", 0)).toBeNull();
    expect(Zone.isKnownZone("Europe/Berlin")).toBe(true);
    expect(Zone.isKnownZone("Mars/Olympus_Mons")).toBe(false);
  });
});

describe("a year of occurrences against croner", () => {
  const zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe"];
  // "*/20 1-2 * * *" and "30 2 * * *" meet every gap and overlap of the three zones.
  const expressions = [
    "0 3 * * *",
    "30 2 * * *",
    "*/20 1-2 * * *",
    "30 2 * * 1-5",
    "45 1 1 * *",
    "0 */6 * * *",
    "15 9 * * 0",
  ];
  const start = Date.UTC(2026, 0, 1);
  const end = Date.UTC(2027, 0, 1);

  const ours = (expression: string, zone: string): Array<string> => {
    const cron = parse(expression);
    const found: Array<string> = [];
    let after = start;
    for (;;) {
      const next = Zone.next(cron, zone, after);
      if (next === null || next >= end) return found;
      found.push(new Date(next).toISOString());
      after = next;
    }
  };

  const theirs = (expression: string, zone: string): Array<string> => {
    const job = new Croner(expression, { timezone: zone, paused: true });
    const found: Array<string> = [];
    let after = new Date(start);
    for (;;) {
      const next = job.nextRun(after);
      if (next === null || next.getTime() >= end) return found;
      found.push(next.toISOString());
      after = next;
    }
  };

  const dayMs = 86_400_000;
  /** The UTC days (ms at 00:00) on or next to which the zone's offset changes. */
  const transitionDays = (zone: string): Set<number> => {
    const days = new Set<number>();
    for (let day = start - dayMs; day < end + dayMs; day += dayMs) {
      if (Zone.offsetAt(zone, day) !== Zone.offsetAt(zone, day + dayMs)) {
        for (const near of [day - dayMs, day, day + dayMs]) days.add(near);
      }
    }
    return days;
  };
  const dayOf = (iso: string): number => Math.floor(Date.parse(iso) / dayMs) * dayMs;

  for (const zone of zones) {
    const transitions = transitionDays(zone);
    for (const expression of expressions) {
      it(`${expression} in ${zone}`, () => {
        const mine = ours(expression, zone);
        expect(mine.length).toBeGreaterThan(10);
        expect(transitions.size).toBe(6);
        const ordinary = (runs: Array<string>) =>
          runs.filter((run) => !transitions.has(dayOf(run)));
        expect(ordinary(mine)).toEqual(ordinary(theirs(expression, zone)));
        // On the transition days: no wall-clock time fires twice.
        const walls = mine
          .filter((run) => transitions.has(dayOf(run)))
          .map((run) => Date.parse(run) + (Zone.offsetAt(zone, Date.parse(run)) ?? 0));
        expect(new Set(walls).size).toBe(walls.length);
      });
    }
  }
});
