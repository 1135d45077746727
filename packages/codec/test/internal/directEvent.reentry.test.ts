// Proves that the decoders keep no state of a call in their modules: a
// decode started from inside another (here, from inside the UTF-8 decoder
// both of them call, at every one of its calls in turn) leaves the outer
// decode's result exactly as it is without the interruption. The UTF-8
// module is wrapped so that a test can make any call of it run a whole
// other decode first.
import { Event } from "@tay/core";
import * as E from "fp-ts/lib/Either.js";
import { describe, expect, it, vi } from "vitest";
import { encodeEvent } from "../../src/Event.js";
import { decodeEventDirect } from "../../src/internal/directEvent.js";
import { decodeValue, encodeValue } from "../../src/Value.js";

// What the k-th call of `decodeUtf8` (counting from 1) runs before it decodes.
const interruption = vi.hoisted(() => ({
  calls: 0,
  at: 0,
  run: (): void => {},
}));

vi.mock("../../src/internal/utf8.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/internal/utf8.js")>();
  return {
    ...actual,
    decodeUtf8: (bytes: Uint8Array, start: number, end: number) => {
      interruption.calls += 1;
      if (interruption.calls === interruption.at) interruption.run();
      return actual.decodeUtf8(bytes, start, end);
    },
  };
});

const encoded = (event: Event.Event) => {
  const result = encodeEvent(event);
  if (E.isLeft(result)) throw new Error(result.left._tag);
  return result.right;
};

const inserted = (jobId: number, queue: string, args: Event.JobInserted["args"]) =>
  Event.jobInserted({
    jobId,
    queue,
    worker: `Worker.${queue}`,
    args,
    priority: jobId % 10,
    maxAttempts: 3,
    scheduledAt: 1_000 + jobId,
    insertedAt: 1_000,
  });

const outer = Event.mutation([
  inserted(1, "mail", new Map<string, Event.JobInserted["args"]>([["to", "a@example.com"]])),
  inserted(2, "billing", ["x", new Map([["amount", 1.5]])]),
  Event.jobFinished({ jobId: 1, at: 2_000, outcome: "discarded", error: "bounced" }),
]);
const other = inserted(77, "other-queue-with-a-longer-name", "a text argument");

const direct = (event: Event.Event) => {
  const { type, schema, payload } = encoded(event);
  return () => decodeEventDirect(type, schema, payload, 0, payload.length);
};

/** The outer decode's result with the k-th UTF-8 call of it interrupted by `run`. */
const interruptedAt = <A>(decode: () => A, at: number, run: () => void): A => {
  interruption.calls = 0;
  interruption.at = at;
  interruption.run = () => {
    // The inner decode's own UTF-8 calls must not count, nor interrupt again.
    const saved = interruption.calls;
    interruption.at = 0;
    run();
    interruption.calls = saved;
  };
  try {
    return decode();
  } finally {
    interruption.at = 0;
  }
};

/** How many UTF-8 calls an undisturbed decode makes. */
const utf8CallsOf = (decode: () => unknown): number => {
  interruption.calls = 0;
  interruption.at = 0;
  decode();
  return interruption.calls;
};

describe("a decode inside another", () => {
  it("leaves the outer direct event decode unchanged, wherever it comes", () => {
    const decodeOuter = direct(outer);
    const decodeOther = direct(other);
    const expected = decodeOuter();
    expect(expected).toEqual(outer);
    const calls = utf8CallsOf(decodeOuter);
    expect(calls).toBeGreaterThanOrEqual(6);
    for (let at = 1; at <= calls; at++) {
      let inner: unknown;
      const result = interruptedAt(decodeOuter, at, () => {
        inner = decodeOther();
      });
      expect(result).toEqual(expected);
      expect(inner).toEqual(other);
    }
  });

  it("leaves the outer value decode unchanged, wherever it comes", () => {
    const outerValue = new Map<string, Event.JobInserted["args"]>([
      ["alpha", ["one", new Map([["beta", "two"]])]],
      ["gamma", "three"],
    ]);
    const encodedValue = (value: Event.JobInserted["args"]) => {
      const bytes = encodeValue(value);
      if (E.isLeft(bytes)) throw new Error(bytes.left._tag);
      return bytes.right;
    };
    const outerBytes = encodedValue(outerValue);
    const otherBytes = encodedValue(["delta", new Map([["epsilon", 1]])]);
    const decodeOuter = () => decodeValue(outerBytes);
    const expected = decodeOuter();
    const calls = utf8CallsOf(decodeOuter);
    expect(calls).toBeGreaterThanOrEqual(6);
    for (let at = 1; at <= calls; at++) {
      let inner: unknown;
      const result = interruptedAt(decodeOuter, at, () => {
        inner = decodeValue(otherBytes);
      });
      expect(result).toEqual(expected);
      expect(inner).toEqual(decodeValue(otherBytes));
    }
  });

  it("leaves the outer decode unchanged when the inner one is refused", () => {
    const decodeOuter = direct(outer);
    const broken = encoded(other).payload.slice(0, -1);
    const calls = utf8CallsOf(decodeOuter);
    for (let at = 1; at <= calls; at++) {
      let inner: unknown = "not run";
      const result = interruptedAt(decodeOuter, at, () => {
        inner = decodeEventDirect(1, 1, broken, 0, broken.length);
      });
      expect(result).toEqual(outer);
      expect(inner).toBeUndefined();
    }
  });
});
