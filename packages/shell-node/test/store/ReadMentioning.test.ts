// `readMentioning` (one job's history without decoding the store): whatever the events, the
// segments' sizes, the bytes read at a time (a few, so that needles are cut between chunks), the
// start and the limit, it hands over exactly the records of files whose payload holds a needle,
// every record still in memory, and the first sequence it did not look at, as a model made of
// `readFrom` says. A sealed segment read whole is taken on trust of its CRC: a byte changed on
// disk after the open, in a record it would not decode, fails the read (`SegmentChecksum`) rather
// than hiding a record; in the active segment (walked record by record) it is `CorruptRecord`.
import * as fs from "node:fs/promises";
import { encodeEvent, JobMention } from "@tay/codec";
import { Event } from "@tay/core";
import { describe, expect, it } from "@effect/vitest";
import { Effect, Exit } from "effect";
import fc from "fast-check";
import * as Projection from "../../src/log/Projection.js";
import * as Store from "../../src/store/Store.js";
import * as StoreOptions from "../../src/store/StoreOptions.js";
import { initialized, nodeDisk } from "../support/store.js";

/** Whether `needle` occurs in `bytes`. */
const holds = (bytes: Uint8Array, needle: Uint8Array): boolean =>
  Buffer.from(bytes).indexOf(Buffer.from(needle)) >= 0;

const payloadOf = (event: Event.Event): Uint8Array => {
  const encoded = encodeEvent(event);
  if (encoded._tag === "Left") throw new Error("the fixture does not encode");
  return encoded.right.payload;
};

const jobIds = fc.integer({ min: 1, max: 4 });

/** Job `jobId` inserted with `args` (null or a string). */
const insertedWith = (jobId: number, args: string | null): Event.Event =>
  Event.jobInserted({
    jobId,
    queue: "q",
    worker: "W",
    args,
    priority: 0,
    maxAttempts: 1,
    scheduledAt: 0,
    insertedAt: 0,
  });

/** An argument that is sometimes another job's mention, spelt out in a string. */
const args = fc.oneof(
  fc.constant(null),
  fc.string({ maxLength: 40 }),
  jobIds.map((jobId) => new TextDecoder().decode(JobMention.jobMention(jobId))),
);

const anEvent: fc.Arbitrary<Event.Event> = fc.oneof(
  fc.record({ jobId: jobIds, args }).map(({ jobId, args: value }) => insertedWith(jobId, value)),
  jobIds.map((jobId) => Event.jobStarted({ jobId, at: 5, attempt: 1 })),
  fc
    .array(jobIds, { minLength: 1, maxLength: 3 })
    .map((ids) => Event.mutation(ids.map((jobId) => Event.jobAvailable({ jobId, at: 7 })))),
);

const plan = fc.record({
  batches: fc.array(fc.array(anEvent, { minLength: 1, maxLength: 5 }), {
    minLength: 1,
    maxLength: 25,
  }),
  // Batches left pending (not flushed) at the end.
  pending: fc.nat(3),
  rotationTargetBytes: fc.integer({ min: 200, max: 3_000 }),
  chunkBytes: fc.oneof(fc.integer({ min: 1, max: 400 }), fc.constant(undefined)),
  jobId: jobIds,
  withListKey: fc.boolean(),
  from: fc.nat(20),
  limit: fc.integer({ min: 1, max: 200 }),
});

describe("readMentioning", () => {
  it.live("hands over what a model made of readFrom says, for any store and read", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(plan, (p) =>
          Effect.runPromise(
            Effect.scoped(
              Effect.gen(function* () {
                const directory = yield* initialized;
                const { store } = yield* Store.open(
                  directory,
                  { rotationTargetBytes: p.rotationTargetBytes, flush: StoreOptions.Manual },
                  Projection.count,
                );
                const flushed = Math.max(0, p.batches.length - p.pending);
                for (const [index, batch] of p.batches.entries()) {
                  yield* store.submit(batch);
                  if (index + 1 === flushed) yield* store.flush();
                }
                const stats = yield* store.stats();
                const inMemory = stats.lastSequence - stats.pendingRecords;
                const needles = [
                  JobMention.jobMention(p.jobId),
                  ...(p.withListKey ? [JobMention.listedJobIdsKey] : []),
                ];
                const from = 1 + (p.from % stats.lastSequence);
                const all = yield* store.readFrom(from, p.limit);
                const expected = all.filter(
                  (entry) =>
                    entry.sequence > inMemory ||
                    needles.some((needle) => holds(payloadOf(entry.event), needle)),
                );
                const read = yield* store.readMentioning(needles, from, p.limit, p.chunkBytes);
                expect(read.entries).toEqual(expected);
                expect(read.next).toBe(from + all.length);
              }),
            ).pipe(Effect.provide(nodeDisk)),
          ),
        ),
        { numRuns: 150 },
      ),
    ),
  );

  /** Every segment file of the store in `directory`. */
  const segmentFiles = (directory: string): Promise<Array<string>> =>
    fs
      .readdir(`${directory}/epochs`, { recursive: true })
      .then((names) =>
        names.filter((name) => name.endsWith(".tay")).map((name) => `${directory}/epochs/${name}`),
      );

  /** Changes one byte of `marker` (an argument) where a segment file holds it: the file's path. */
  const damage = (directory: string, marker: string) =>
    Effect.promise(async () => {
      for (const path of await segmentFiles(directory)) {
        const bytes = await fs.readFile(path);
        const at = bytes.indexOf(marker);
        if (at < 0) continue;
        bytes[at] = (bytes[at] ?? 0) ^ 0x01;
        await fs.writeFile(path, bytes);
        return path;
      }
      throw new Error(`no segment holds ${marker}`);
    });

  /** Jobs 1..12, a record each, in segments of about three records (by default); job 2's args are `marker`, job 12's `last`. */
  const stored = (marker: string, last: string, rotationTargetBytes = 400) =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const { store } = yield* Store.open(directory, { rotationTargetBytes }, Projection.count);
      for (let jobId = 1; jobId <= 12; jobId += 1) {
        const value = jobId === 2 ? marker : jobId === 12 ? last : "x".repeat(40);
        yield* store.append([insertedWith(jobId, value)]);
      }
      return { directory, store };
    });

  it.scopedLive("fails on a sealed segment changed on disk, in a record it would not decode", () =>
    Effect.gen(function* () {
      const { directory, store } = yield* stored("sealed-marker-0123456789", "y".repeat(40));
      const before = yield* store.readMentioning([JobMention.jobMention(1)], 1, 1_000);
      expect(before.entries.map((entry) => entry.sequence)).toEqual([1]);
      yield* damage(directory, "sealed-marker-0123456789");
      const exit = yield* Effect.exit(store.readMentioning([JobMention.jobMention(1)], 1, 1_000));
      expect(Exit.isFailure(exit)).toBe(true);
      expect(JSON.stringify(exit)).toContain("SegmentChecksum");
      // Read from inside the segment, record by record: that record's CRC refuses it.
      const walked = yield* Effect.exit(store.readMentioning([JobMention.jobMention(1)], 2, 1));
      expect(JSON.stringify(walked)).toContain("CorruptRecord");
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "fails on the active segment changed on disk, in a record it would not decode",
    () =>
      Effect.gen(function* () {
        // One segment, never sealed.
        const { directory, store } = yield* stored("x".repeat(40), "active-marker-0123456789", 1e6);
        yield* damage(directory, "active-marker-0123456789");
        const exit = yield* Effect.exit(store.readMentioning([JobMention.jobMention(1)], 1, 1_000));
        expect(Exit.isFailure(exit)).toBe(true);
        expect(JSON.stringify(exit)).toContain("CorruptRecord");
      }).pipe(Effect.provide(nodeDisk)),
  );
});
