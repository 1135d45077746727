/**
 * `readMentioning` on PostgreSQL (PGlite in process): whatever was
 * appended, the start, the limit, the needles (one, two or three) and the
 * rows a statement answers (`pageRecords`, down to one: a needle many rows
 * hold is read in steps), it hands over exactly the rows whose record holds
 * a needle and the first sequence not looked at, as a model made of
 * `readFrom` says. A generation another log compacted away is `Compacted`,
 * not an empty answer; a matching row whose bytes were changed is refused
 * (`CorruptRecord`).
 */
import type { PGlite } from "@electric-sql/pglite";
import { encodeEvent, JobMention } from "@tay/codec";
import { Event } from "@tay/core";
import { PgLog, type PgOptions, PgSchema } from "@tay/log-postgres";
import { type Log, Projection } from "@tay/shell-node";
import { Effect } from "effect";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as Pglite from "./support/pglite.js";
import { append, inserted, run } from "./support/events.js";

const pglite = Pglite.perFile("m");
const database = (): PGlite => pglite.database();
const url = "postgres://tester@pglite.invalid:5432/memory";

const openCollect = (options: PgOptions.PgLogOptions) =>
  PgLog.open(url, options, Projection.collect);

/** Whether `needle` occurs in the encoded payload of `event`. */
const holds = (event: Event.Event, needle: Uint8Array): boolean => {
  const encoded = encodeEvent(event);
  if (encoded._tag === "Left") throw new Error("the fixture does not encode");
  return Buffer.from(encoded.right.payload).indexOf(Buffer.from(needle)) >= 0;
};

const jobIds = fc.integer({ min: 1, max: 4 });

const anEvent: fc.Arbitrary<Event.Event> = fc.oneof(
  fc
    .record({
      jobId: jobIds,
      args: fc.oneof(
        fc.constant(null),
        // Another job's mention, spelt out in a string: a row the caller filters out.
        jobIds.map((jobId) => new TextDecoder().decode(JobMention.jobMention(jobId))),
      ),
    })
    .map(({ jobId, args }) =>
      Event.jobInserted({
        jobId,
        queue: "q",
        worker: "W",
        args,
        priority: 0,
        maxAttempts: 1,
        scheduledAt: 0,
        insertedAt: 0,
      }),
    ),
  jobIds.map((jobId) => Event.jobStarted({ jobId, at: 5, attempt: 1 })),
  fc
    .array(jobIds, { minLength: 1, maxLength: 3 })
    .map((ids) => Event.mutation(ids.map((jobId) => Event.jobAvailable({ jobId, at: 7 })))),
);

/** The model: what `readFrom` reads from `from` (at most `limit`) that holds a needle. */
const modelled = (
  log: Log.Log<PgLog.PgKind>,
  needles: ReadonlyArray<Uint8Array>,
  from: number,
  limit: number,
) =>
  Effect.map(log.view.readFrom(from, limit), (all) => ({
    entries: all.filter((entry) => needles.some((needle) => holds(entry.event, needle))),
    next: from + all.length,
  }));

const mentioned = (
  log: Log.Log<PgLog.PgKind>,
  needles: ReadonlyArray<Uint8Array>,
  from: number,
  limit: number,
) => {
  const read = log.view.readMentioning;
  if (read === undefined) throw new Error("the PostgreSQL log reads no mentions");
  return read(needles, from, limit);
};

describe("readMentioning on PostgreSQL", () => {
  it("hands over what a model made of readFrom says, read in steps of any page", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(anEvent, { minLength: 1, maxLength: 4 }), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.integer({ min: 1, max: 5 }),
        fc.subarray([1, 2, 3, 4], { minLength: 1, maxLength: 3 }),
        fc.nat(30),
        fc.integer({ min: 1, max: 40 }),
        async (batches, pageRecords, ids, start, limit) => {
          const options = pglite.fresh({ pageRecords });
          await run(PgSchema.init(url, options));
          await run(
            Effect.gen(function* () {
              const { log } = yield* openCollect(options);
              for (const batch of batches) yield* append(log, batch);
              const last = log.lastSequence();
              const from = 1 + (start % last);
              const needles = ids.map((jobId) => JobMention.jobMention(jobId));
              // Read to the end in steps, as the history route does.
              const entries = [];
              for (let at = from; at <= Math.min(last, from + limit - 1); ) {
                const room = from + limit - at;
                const read = yield* mentioned(log, needles, at, room);
                expect(read.next).toBeGreaterThan(at);
                entries.push(...read.entries);
                at = read.next;
              }
              expect(entries).toEqual((yield* modelled(log, needles, from, limit)).entries);
              // One call answers a prefix of the model's, and says where it stopped.
              const once = yield* mentioned(log, needles, from, limit);
              const model = yield* modelled(log, needles, from, once.next - from);
              expect(once.entries).toEqual(model.entries);
            }),
          );
        },
      ),
      { numRuns: 25 },
    );
  });

  it("is Compacted when another log compacted the generation away", async () => {
    const options = pglite.fresh();
    await run(PgSchema.init(url, options));
    const outcome = await run(
      Effect.gen(function* () {
        const first = yield* openCollect(options);
        const second = yield* openCollect(options);
        yield* append(first.log, [inserted(1), inserted(2), inserted(3)]);
        // The second knows those rows (its head at 3), then the first compacts.
        yield* second.log.refresh?.() ?? Effect.void;
        expect(second.log.lastSequence()).toBe(3);
        yield* first.log.compact([inserted(3)], 3);
        // The second has not noticed: its generation is gone under it.
        return yield* Effect.flip(mentioned(second.log, [JobMention.jobMention(1)], 1, 10));
      }),
    );
    expect(outcome).toMatchObject({ _tag: "Compacted" });
  });

  it("refuses a matching row whose bytes were changed", async () => {
    const options = pglite.fresh();
    const schema = options.schema ?? "";
    await run(PgSchema.init(url, options));
    const outcome = await run(
      Effect.gen(function* () {
        const { log } = yield* openCollect(options);
        yield* append(log, [inserted(1), inserted(2)]);
        // The last byte of row 2's record (its record CRC) flipped.
        yield* Effect.promise(() =>
          database().query(
            `UPDATE ${schema}.tay_record SET record = overlay(record placing decode(lpad(to_hex(get_byte(record, length(record) - 1) # 1), 2, '0'), 'hex') from length(record) for 1) WHERE sequence = 2`,
          ),
        );
        const clean = yield* mentioned(log, [JobMention.jobMention(1)], 1, 10);
        expect(clean.entries.map((entry) => entry.sequence)).toEqual([1]);
        return yield* Effect.flip(mentioned(log, [JobMention.jobMention(2)], 1, 10));
      }),
    );
    expect(outcome).toMatchObject({ _tag: "CorruptRecord" });
  });
});
