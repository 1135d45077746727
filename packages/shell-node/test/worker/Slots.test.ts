/**
 * The worker's slots alone, where the order of answers is the test's: a
 * remote worker's claim can be answered before the end it rode with is
 * released (its answers come separately), which an in-process engine never
 * shows (an end's answer there is handled before the claim's).
 */
import { describe, expect, it } from "vitest";
import { Slots } from "../../src/worker/internal/slots.js";

describe("Slots", () => {
  it("starts a claimed job of a queue with room only once the global limit has room", () => {
    const slots = new Slots(
      new Map([
        ["a", 1],
        ["b", 1],
      ]),
      1,
    );
    const started: Array<string> = [];
    slots.admit("a", () => started.push("a"));
    expect(started).toEqual(["a"]);
    // a's handler settled: its slot may be claimed again, and the claim's answer is a job of b.
    slots.finishing("a");
    expect(slots.free()).toBe(1);
    slots.admit("b", () => started.push("b"));
    // b has room of its own, but the worker's one slot is still a's until its end is released.
    expect(started).toEqual(["a"]);
    expect(slots.busy).toBe(2);
    slots.release("a", true);
    expect(started).toEqual(["a", "b"]);
    expect(slots.busy).toBe(1);
  });

  it("starts a claimed job only once its own queue has room, whatever the global room", () => {
    const slots = new Slots(new Map([["a", 1]]), 4);
    const started: Array<number> = [];
    slots.admit("a", () => started.push(1));
    slots.finishing("a");
    slots.admit("a", () => started.push(2));
    expect(started).toEqual([1]);
    slots.release("a", true);
    expect(started).toEqual([1, 2]);
  });
});
