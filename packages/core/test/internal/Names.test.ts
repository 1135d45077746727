// The deciders hold each queue and worker name once: `interned` returns a
// string equal to its argument, past its bound too (property), and the
// events decided for jobs whose names were decoded one request at a time
// weigh what events with literal names weigh. Nothing in JavaScript tells
// two equal strings apart, so the test weighs the events on V8's heap
// (`--expose-gc`, switched on for this process) after two collections.
import fc from "fast-check";
import * as Either from "fp-ts/lib/Either.js";
import { describe, expect, it } from "vitest";
import * as Commands from "../../src/Commands.js";
import * as Decide from "../../src/Decide.js";
import { interned, internedNamesMax } from "../../src/internal/Names.js";
import { heapBytesPer } from "../support/Weigh.js";

const now = 1_800_000_000_000;
const decisions = 50_000;
// What a server decodes for every insert: names decoded from the request's
// bytes, each a string of its own. (V8's JSON parser, measured, sometimes
// hands out the string it parsed for the same field of an earlier object,
// and sometimes not: not a source to test with.)
const utf8 = new TextEncoder();
const text = new TextDecoder();
const queueBytes = utf8.encode("emails.transactional");
const workerBytes = utf8.encode("SendWelcomeEmail");

interface Names {
  readonly queue: string;
  readonly worker: string;
}

const decoded = (): Names => ({ queue: text.decode(queueBytes), worker: text.decode(workerBytes) });
const literal = (): Names => ({ queue: "emails.transactional", worker: "SendWelcomeEmail" });

// A (1,1), or with a timeout a (1,3): the deciders build the two apart.
let withTimeout = false;

const decided = (index: number, names: Names): Decide.Decision => {
  const job = withTimeout ? { ...names, args: null, timeoutMs: 1_000 } : { ...names, args: null };
  const command = Commands.insertJobs({ now, jobs: [job] });
  const result = Decide.insertJobsAfter(index, command);
  if (Either.isLeft(result)) throw new Error(result.left._tag);
  return result.right;
};

/** Bytes on V8's heap per decision kept, names taken from `names`. */
const bytesPerDecision = (names: () => Names): number =>
  heapBytesPer(
    decisions,
    () => {
      const kept = new Array<Decide.Decision>(decisions);
      for (let index = 0; index < decisions; index++) kept[index] = decided(index, names());
      return kept;
    },
    (kept) => expect(kept[decisions - 1]?.length).toBe(1),
  );

describe("names held once", () => {
  it("interned returns its argument, past its bound too (property)", () => {
    const name = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.integer({ min: 0, max: internedNamesMax * 2 }).map((index) => `queue-${index}`),
    );
    fc.assert(
      fc.property(fc.array(name, { maxLength: 60 }), (names) => {
        for (const value of names) expect(interned(value)).toBe(value);
      }),
    );
    for (let index = 0; index <= internedNamesMax * 2; index++) {
      expect(interned(`name ${index}`)).toBe(`name ${index}`);
    }
  });

  it.each([false, true])(
    "events decided from decoded names weigh what events with literal names weigh (timeout: %s)",
    (timeout) => {
      withTimeout = timeout;
      // A round of each first, for the compiler and the memory of names.
      bytesPerDecision(literal);
      bytesPerDecision(decoded);
      const withLiterals = Math.min(bytesPerDecision(literal), bytesPerDecision(literal));
      const withDecoded = Math.min(bytesPerDecision(decoded), bytesPerDecision(decoded));

      // Two strings of their own would be 40 and 32 bytes more.
      expect(withDecoded - withLiterals).toBeLessThan(24);
    },
  );
});
