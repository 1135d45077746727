// The table of waiting claims by id (server/internal/waitingClaims.ts): a give-up aborts the
// claim it names; one that came first is kept for the claim's arrival (answered at once), for
// 60 s and at most 10,000 at a time; ids in use and answered claims are handled.
import { describe, expect, it } from "vitest";
import {
  earlyGiveUpMs,
  earlyGiveUpsMax,
  WaitingClaims,
} from "../../src/server/internal/waitingClaims.js";

const clock = () => {
  let now = 0;
  const pass = (ms: number): void => {
    now += ms;
  };
  return { now: () => now, pass };
};

describe("WaitingClaims", () => {
  it("gives up the claim it names, and only while it waits", () => {
    const claims = new WaitingClaims();
    const first = new AbortController();
    const other = new AbortController();
    expect(claims.add("a", first)).toBe(true);
    expect(claims.add("b", other)).toBe(true);
    expect(claims.giveUp("a")).toBe(true);
    expect([first.signal.aborted, other.signal.aborted]).toEqual([true, false]);
    claims.remove("b", other);
    expect(claims.size).toBe(0);
  });

  it("answers at once a claim whose give-up came first, within 60 s", () => {
    const time = clock();
    const claims = new WaitingClaims(time.now);
    expect(claims.giveUp("early")).toBe(false);
    time.pass(earlyGiveUpMs - 1);
    expect(claims.add("early", new AbortController())).toBe(false);
    // Used up: the same id later is a claim like any other.
    expect(claims.add("early", new AbortController())).toBe(true);
    expect(claims.giveUp("late")).toBe(false);
    time.pass(earlyGiveUpMs);
    expect(claims.add("late", new AbortController())).toBe(true);
  });

  it("keeps at most 10,000 early give-ups, the oldest dropped first", () => {
    const claims = new WaitingClaims(() => 0);
    for (let index = 0; index <= earlyGiveUpsMax; index++) claims.giveUp(`id-${index}`);
    expect(claims.add("id-0", new AbortController())).toBe(true);
    expect(claims.add("id-1", new AbortController())).toBe(false);
    expect(claims.add(`id-${earlyGiveUpsMax}`, new AbortController())).toBe(false);
  });

  it("keeps the first claim of an id in use; the second's answer does not remove it", () => {
    const claims = new WaitingClaims();
    const first = new AbortController();
    const second = new AbortController();
    claims.add("same", first);
    claims.add("same", second);
    claims.remove("same", second);
    expect(claims.giveUp("same")).toBe(true);
    expect([first.signal.aborted, second.signal.aborted]).toEqual([true, false]);
  });
});
