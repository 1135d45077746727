// Proves the terminal inspection index gives back exactly the whole records a lean fold let go
// (by id and by scan, results included, whether a result came with the job or after it was
// handed over), is current only for the store, epoch and sequence its HEAD names, and is emptied
// with the reason when it is missing, foreign, behind, torn or flipped. It runs on real temporary
// directories through NodeDisk, the records folded by core from random completion orders.
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { describe, expect, it } from "@effect/vitest";
import { decodeValue, encodeValue } from "@tay/codec";
import { Event, Evolve, Generation, type Job, State, Terminal, type Value } from "@tay/core";
import { Effect, Either, Layer } from "effect";
import * as fc from "fast-check";
import { Disk, DiskError } from "../../src/disk/Disk.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as TerminalIndex from "../../src/store/TerminalIndex.js";
import {
  crc32c,
  decodeRecord,
  encodeRecordInto,
  recordSize,
} from "../../src/store/internal/codec.js";
import { OffsetTable } from "../../src/store/internal/offsetTable.js";
import {
  decodeFrame,
  decodeHead,
  deepJobType,
  encodeHead,
  headType,
} from "../../src/store/internal/terminalIndexFormat.js";
import { nodeDisk, temporaryDirectory } from "../support/store.js";

const storeId = "07070707-0707-0707-0707-070707070707";
const identity: TerminalIndex.Identity = { storeId, epoch: 3, lastSequence: 42 };

/** A job's life: inserted, started, completed (with a result in the same mutation, or later). */
const lifeOf = (jobId: number, result: "none" | "with" | "later"): ReadonlyArray<Event.Event> => [
  Event.jobInserted({
    jobId,
    queue: jobId % 2 === 0 ? "even" : "odd",
    worker: "W",
    args: new Map([["n", jobId]]),
    priority: 0,
    maxAttempts: 3,
    scheduledAt: 0,
    insertedAt: 0,
  }),
  Event.jobStarted({ jobId, attempt: 1, at: jobId }),
  result === "with"
    ? Event.mutation([
        Event.jobFinished({ jobId, outcome: "completed", error: null, at: jobId + 1 }),
        Event.resultRecorded({ jobId, result: `r${jobId}`, at: jobId + 1 }),
      ])
    : Event.jobFinished({ jobId, outcome: "completed", error: null, at: jobId + 1 }),
];

const history = fc
  .array(fc.constantFrom<"none" | "with" | "later">("none", "with", "later"), {
    minLength: 1,
    maxLength: 40,
  })
  .map((results) => {
    const records: Array<Event.Event> = results.flatMap((result, index) =>
      lifeOf(index + 1, result),
    );
    results.forEach((result, index) => {
      if (result === "later") {
        records.push(Event.resultRecorded({ jobId: index + 1, result: "late", at: 999 }));
      }
    });
    return records;
  });

/** Folds lean, appending what leaves memory every `every` records; the full state to compare. */
const indexed = (
  index: TerminalIndex.TerminalIndex,
  records: ReadonlyArray<Event.Event>,
  every: number,
) =>
  Effect.gen(function* () {
    const builder = Generation.start(0, { lean: true, collectLeft: true });
    for (const [at, record] of records.entries()) {
      Generation.apply(builder, at + 1, record);
      if (at % every === 0) yield* TerminalIndex.add(index, Generation.takeLeft(builder));
    }
    yield* TerminalIndex.add(index, Generation.takeLeft(builder));
    const full = Evolve.fold(records);
    if (full._tag === "Left") return expect.unreachable("the history folds");
    return [...State.jobs(full.right)].filter(Terminal.leavesMemory);
  });

/** Where the first entry that starts after byte `after` of the entries file starts. */
const headerOffsetAfter = (entries: string, after: number) =>
  Effect.promise(async () => {
    const bytes = await fs.readFile(entries);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // FORMAT.md: the payload length at header bytes 16..19; 24 + length + 4 bytes a record.
    let offset = 0;
    while (offset <= after) offset += 28 + view.getUint32(offset + 16);
    return offset;
  });

/** Removes the offsets file saved with HEAD: the next open walks the entries. */
const removeOffsets = (directory: string) =>
  Effect.promise(async () => {
    const index = TerminalIndex.indexPath(directory);
    for (const name of await fs.readdir(index)) {
      if (TerminalIndex.isOffsetsFile(name)) await fs.rm(path.join(index, name));
    }
  });

/** The name of the one offsets file beside HEAD (a publish removes the others). */
const offsetsFile = (directory: string) =>
  Effect.promise(async () => {
    const names = (await fs.readdir(TerminalIndex.indexPath(directory))).filter(
      TerminalIndex.isOffsetsFile,
    );
    expect(names).toHaveLength(1);
    return names[0] ?? "";
  });

const lookups = (index: TerminalIndex.TerminalIndex, jobs: ReadonlyArray<Job.Job>) =>
  Effect.forEach(jobs, (job) => TerminalIndex.lookup(index, job.jobId));

describe("TerminalIndex", () => {
  it.scopedLive(
    "lets the event loop turn between the records of an image it publishes, and names it by its sequence and CRC",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const { index } = yield* TerminalIndex.open(directory, identity);
        // The loop's turns, counted by a callback that re-arms itself each check phase.
        let turns = 0;
        let counting = true;
        const count = () => {
          turns += 1;
          if (counting) setImmediate(count);
        };
        setImmediate(count);
        const seen: Array<number> = [];
        const records = [1, 2, 3, 4].map((at) => new Uint8Array(10).fill(at));
        function* pulled(): Generator<Uint8Array> {
          for (const record of records) {
            seen.push(turns);
            yield record;
          }
        }
        const image = { records: { [Symbol.iterator]: pulled }, failure: () => undefined };
        const published = yield* TerminalIndex.publish(index, identity, image, true);
        counting = false;
        expect(published).toBe(true);
        // Each record is made (encoded) after the loop turned since the one before.
        for (let at = 1; at < seen.length; at++) {
          expect(seen[at] ?? 0).toBeGreaterThan(seen[at - 1] ?? 0);
        }
        const bytes = Uint8Array.from(records.flatMap((record) => [...record]));
        const name = TerminalIndex.imageFileName(identity, { bytes: 40, crc: crc32c(bytes) });
        expect(name).toBe(`image-3-42-${crc32c(bytes).toString(16).padStart(8, "0")}`);
        const index_ = TerminalIndex.indexPath(directory);
        expect(
          new Uint8Array(yield* Effect.promise(() => fs.readFile(path.join(index_, name)))),
        ).toEqual(bytes);
        yield* TerminalIndex.close(index);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("gives back every record that left memory, by id and by scan", () =>
    Effect.gen(function* () {
      const samples = fc.sample(fc.tuple(history, fc.integer({ min: 1, max: 9 })), 20);
      for (const [records, every] of samples) {
        const directory = yield* temporaryDirectory;
        const { index, stale } = yield* TerminalIndex.open(directory, identity);
        expect(stale).toEqual({ _tag: "Missing" });
        const expected = yield* indexed(index, records, every);
        expect(yield* lookups(index, expected)).toEqual(expected);
        expect(yield* TerminalIndex.scan(index)).toEqual(expected);
        expect(yield* TerminalIndex.lookup(index, 10_000)).toBeUndefined();
        // A page at once, in spans of every size, unknown ids included: what one at a time gives.
        const ids = [...expected.map((job) => job.jobId), 10_000].sort((x, y) => y - x);
        for (const spanBytes of [1, 200, 4096, TerminalIndex.pageReadBytes]) {
          const page = TerminalIndex.lookupPageNow(index, ids, spanBytes);
          expect(page).toEqual(Either.right(ids.map((id) => expected.find((j) => j.jobId === id))));
        }
        yield* TerminalIndex.publish(index, identity);
        yield* TerminalIndex.close(index);
        // Reopened current: the same answers, from the offsets the open noted.
        const again = yield* TerminalIndex.open(directory, identity);
        expect(again.stale).toBeUndefined();
        expect(yield* lookups(again.index, expected)).toEqual(expected);
        yield* TerminalIndex.close(again.index);
      }
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("copies entries as their bytes, checked, with their finish times", () =>
    Effect.gen(function* () {
      const entriesOf = (directory: string) =>
        Effect.promise(() =>
          fs.readFile(path.join(TerminalIndex.indexPath(directory), TerminalIndex.entriesName)),
        );
      // A job longer than a span's page past its start, and last: read alone.
      const big = lifeOf(1_000, "none").map((event) =>
        event._tag === "JobInserted" ? { ...event, args: "x".repeat(20_000) } : event,
      );
      const samples = fc.sample(history, 10);
      for (const records of [...samples, big]) {
        const source = yield* temporaryDirectory;
        const target = yield* temporaryDirectory;
        const from = (yield* TerminalIndex.open(source, identity)).index;
        const to = (yield* TerminalIndex.open(target, identity)).index;
        const expected = yield* indexed(from, records, 3);
        const ids = expected.map((job) => job.jobId);
        // In two pages, as the compaction's copy goes.
        yield* TerminalIndex.copyEntries(from, to, ids.slice(0, 5));
        yield* TerminalIndex.copyEntries(from, to, ids.slice(5));
        expect(yield* lookups(to, expected)).toEqual(expected);
        for (const jobId of ids) {
          expect(TerminalIndex.finishedAtNow(to, jobId)).toBe(jobId + 1);
        }
        yield* TerminalIndex.close(to);
        // In one call every entry of the source, each one of these jobs': the same bytes, in
        // the same order (in two, a later result of the first page's jobs comes before the
        // second page's jobs).
        const whole = yield* temporaryDirectory;
        const all = (yield* TerminalIndex.open(whole, identity)).index;
        yield* TerminalIndex.copyEntries(from, all, ids);
        expect(yield* entriesOf(whole)).toEqual(yield* entriesOf(source));
        yield* TerminalIndex.close(all);
        // A payload byte flipped under the source: the copy refuses, naming where.
        const bytes = yield* entriesOf(source);
        const flipped = Uint8Array.from(bytes);
        const last = flipped.length - 8;
        flipped[last] = (flipped[last] ?? 0) ^ 1;
        yield* Effect.promise(() =>
          fs.writeFile(
            path.join(TerminalIndex.indexPath(source), TerminalIndex.entriesName),
            flipped,
          ),
        );
        const again = (yield* TerminalIndex.open(yield* temporaryDirectory, identity)).index;
        const refused = yield* Effect.either(TerminalIndex.copyEntries(from, again, ids));
        expect(Either.isLeft(refused) && refused.left._tag).toBe("TerminalIndexCorrupt");
        yield* TerminalIndex.close(again);
        yield* TerminalIndex.close(from);
      }
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "is emptied, with the reason, unless HEAD names this store, epoch and sequence",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const records = lifeOf(1, "with");
        const reopen = (other: TerminalIndex.Identity) =>
          Effect.gen(function* () {
            const first = yield* TerminalIndex.open(directory, identity);
            yield* indexed(first.index, records, 1);
            yield* TerminalIndex.publish(first.index, identity);
            yield* TerminalIndex.close(first.index);
            const opened = yield* TerminalIndex.open(directory, other);
            const found = yield* TerminalIndex.lookup(opened.index, 1);
            yield* TerminalIndex.close(opened.index);
            return { stale: opened.stale, found };
          });
        const other = "08080808-0808-0808-0808-080808080808";
        const foreign = yield* reopen({ ...identity, storeId: other });
        expect(foreign.stale?._tag).toBe("OtherStore");
        expect(foreign.found).toBeUndefined();
        expect((yield* reopen({ ...identity, epoch: 4 })).stale).toEqual({
          _tag: "OtherEpoch",
          found: 3,
        });
        expect((yield* reopen({ ...identity, lastSequence: 43 })).stale).toEqual({
          _tag: "OtherSequence",
          found: 42,
        });
        expect((yield* reopen(identity)).stale).toBeUndefined();
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "reads entries across chunks, one longer than a chunk, and finds a later flip",
    () =>
      Effect.gen(function* () {
        // Entries of 600 KB straddle the 4 MiB chunks of the open's scan, and
        // one of 5 MB needs a chunk of twice the size: each is read again
        // whole from its first byte, never joined from two reads.
        const big = (jobId: number, bytes: number) =>
          lifeOf(jobId, "with").map((record) =>
            record._tag === "JobInserted" ? { ...record, args: "x".repeat(bytes) } : record,
          );
        const records = [
          ...Array.from({ length: 12 }, (_, index) => big(index + 1, 600_000)).flat(),
          ...big(13, 5_000_000),
          ...big(14, 10),
        ];
        const directory = yield* temporaryDirectory;
        const entries = path.join(TerminalIndex.indexPath(directory), TerminalIndex.entriesName);
        const first = yield* TerminalIndex.open(directory, identity);
        const expected = yield* indexed(first.index, records, 3);
        yield* TerminalIndex.publish(first.index, identity);
        yield* TerminalIndex.close(first.index);
        const again = yield* TerminalIndex.open(directory, identity);
        expect(again.stale).toBeUndefined();
        expect(yield* lookups(again.index, expected)).toEqual(expected);
        expect(yield* TerminalIndex.scan(again.index)).toEqual(expected);
        yield* TerminalIndex.close(again.index);
        // A flipped payload byte past the first chunk: the open checks headers
        // only (the payload's record CRC is the lookup's), so it is current,
        // and the lookup of the one entry that holds the byte fails, typed.
        const flipped = TerminalIndex.scanChunkBytes + 1_000_000;
        const flip = (at: number) =>
          Effect.promise(async () => {
            const bytes = await fs.readFile(entries);
            bytes[at] = (bytes[at] ?? 0) ^ 1;
            await fs.writeFile(entries, bytes);
          });
        yield* flip(flipped);
        const opened = yield* TerminalIndex.open(directory, identity);
        expect(opened.stale).toBeUndefined();
        const failed: Array<number> = [];
        for (const job of expected) {
          const found = TerminalIndex.lookupNow(opened.index, job.jobId);
          if (Either.isLeft(found)) {
            expect(found.left._tag).toBe("TerminalIndexCorrupt");
            failed.push(job.jobId);
          } else expect(found.right).toEqual(job);
        }
        expect(failed).toHaveLength(1);
        yield* TerminalIndex.close(opened.index);
        // A flipped header byte of a later entry (its sequence, at 8..15) is found by the
        // open's walk, which an index without its offsets file takes (an older build's HEAD,
        // or a torn or flipped offsets file; the saved offsets are tested below).
        yield* flip(flipped);
        const header = yield* headerOffsetAfter(entries, flipped);
        yield* flip(header + 12);
        yield* removeOffsets(directory);
        const flippedHeader = yield* TerminalIndex.open(directory, identity);
        const stale = flippedHeader.stale;
        if (stale?._tag !== "Corrupt") return expect.unreachable(`corrupt, not ${stale?._tag}`);
        expect(stale.offset).toBe(header);
        yield* TerminalIndex.close(flippedHeader.index);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("is rebuilt after an append without publish, a flipped byte or a torn file", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      const entries = path.join(TerminalIndex.indexPath(directory), TerminalIndex.entriesName);
      const published = (records: ReadonlyArray<Event.Event>) =>
        Effect.gen(function* () {
          const { index } = yield* TerminalIndex.open(directory, identity);
          yield* indexed(index, records, 1);
          yield* TerminalIndex.publish(index, identity);
          return index;
        });
      // Appending after an open takes HEAD away until the next publish.
      const index = yield* published(lifeOf(1, "none"));
      yield* TerminalIndex.add(index, {
        jobs: [],
        results: [Event.resultRecorded({ jobId: 1, result: 1, at: 5 })],
      });
      yield* TerminalIndex.close(index);
      expect((yield* TerminalIndex.open(directory, identity)).stale).toEqual({ _tag: "Missing" });
      for (const damage of ["flip", "truncate"] as const) {
        yield* TerminalIndex.close(yield* published(lifeOf(1, "with")));
        yield* Effect.promise(async () => {
          const bytes = await fs.readFile(entries);
          if (damage === "flip") {
            // The entry's header (its sequence): the open's walk (no offsets file) checks headers.
            bytes[12] = (bytes[12] ?? 0) ^ 1;
            await fs.writeFile(entries, bytes);
          } else {
            await fs.writeFile(entries, bytes.subarray(0, bytes.length - 3));
          }
        });
        if (damage === "flip") yield* removeOffsets(directory);
        const opened = yield* TerminalIndex.open(directory, identity);
        expect(opened.stale?._tag).toBe("Corrupt");
        expect(TerminalIndex.describeStaleness(opened.stale ?? { _tag: "Missing" })).toMatch(
          /^entry at offset \d+: /,
        );
        expect(yield* TerminalIndex.lookup(opened.index, 1)).toBeUndefined();
        yield* TerminalIndex.close(opened.index);
      }
    }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive(
    "reads a page whose entries outgrow the span alone, and fails on a flipped one",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const { index } = yield* TerminalIndex.open(directory, identity);
        const big = (jobId: number) =>
          lifeOf(jobId, "with").map((event) =>
            event._tag === "JobInserted" ? { ...event, args: "x".repeat(10_000 * jobId) } : event,
          );
        const expected = yield* indexed(index, [...big(1), ...big(2), ...lifeOf(3, "later")], 2);
        expect(TerminalIndex.lookupPageNow(index, [1, 2, 3])).toEqual(Either.right(expected));
        const entries = path.join(TerminalIndex.indexPath(directory), TerminalIndex.entriesName);
        const bytes = yield* Effect.promise(() => fs.readFile(entries));
        bytes[bytes.length - 5] = (bytes[bytes.length - 5] ?? 0) ^ 0xff;
        yield* Effect.promise(() => fs.writeFile(entries, bytes));
        const flipped = TerminalIndex.lookupPageNow(index, [1, 2, 3]);
        expect(Either.isLeft(flipped) && flipped.left._tag).toBe("TerminalIndexCorrupt");
        yield* TerminalIndex.close(index);
      }).pipe(Effect.provide(nodeDisk)),
  );
  it.scopedLive(
    "keeps the offsets HEAD names when a crash falls between new offsets and their HEAD",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const first = yield* TerminalIndex.open(directory, identity);
        yield* indexed(first.index, [...lifeOf(1, "with"), ...lifeOf(2, "none")], 1);
        // With an image, HEAD stays while entries are appended after it (as an engine's does).
        const image = { records: [new Uint8Array(8)], failure: () => undefined };
        yield* TerminalIndex.publish(first.index, identity, image);
        const kept = yield* offsetsFile(directory);
        // More entries, published at a later sequence by a process that dies
        // before HEAD's rename: the new offsets are written beside the old.
        yield* indexed(first.index, lifeOf(3, "none"), 1);
        const head = path.join(TerminalIndex.indexPath(directory), TerminalIndex.headName);
        const dies = Layer.succeed(Disk, {
          ...NodeDisk.make,
          rename: (source: string, target: string) =>
            target === head
              ? Effect.fail(
                  new DiskError({ operation: "rename", path: target, code: "EIO", detail: "" }),
                )
              : NodeDisk.make.rename(source, target),
        });
        const later = { ...identity, lastSequence: identity.lastSequence + 3 };
        const failed = yield* Effect.either(
          Effect.provide(TerminalIndex.publish(first.index, later), dies),
        );
        expect(Either.isLeft(failed)).toBe(true);
        yield* TerminalIndex.close(first.index);
        const names = yield* Effect.promise(() => fs.readdir(TerminalIndex.indexPath(directory)));
        const offsetsFiles = names.filter(TerminalIndex.isOffsetsFile);
        expect(offsetsFiles).toHaveLength(2);
        expect(offsetsFiles).toContain(kept);
        expect(offsetsFiles.some((name) => name.startsWith("offsets-3-45-"))).toBe(true);
        // Job 1's entry header flipped: only a walk would see it. The open at
        // the old HEAD takes its offsets (current, no walk).
        const entries = path.join(TerminalIndex.indexPath(directory), TerminalIndex.entriesName);
        const bytes = yield* Effect.promise(() => fs.readFile(entries));
        bytes[12] = (bytes[12] ?? 0) ^ 1;
        yield* Effect.promise(() => fs.writeFile(entries, bytes));
        const again = yield* TerminalIndex.open(directory, identity);
        expect(again.stale).toBeUndefined();
        yield* TerminalIndex.close(again.index);
      }).pipe(Effect.provide(nodeDisk)),
  );

  it.scopedLive("opens from the offsets saved with HEAD, and walks when they do not check", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      const at = (name: string) => path.join(TerminalIndex.indexPath(directory), name);
      const read = (name: string) => Effect.promise(() => fs.readFile(at(name)));
      const write = (name: string, bytes: Uint8Array) =>
        Effect.promise(() => fs.writeFile(at(name), bytes));
      const records = [
        ...lifeOf(1, "with"),
        ...lifeOf(2, "none"),
        ...lifeOf(3, "later"),
        Event.resultRecorded({ jobId: 3, result: "late", at: 999 }),
      ];
      const first = yield* TerminalIndex.open(directory, identity);
      const expected = yield* indexed(first.index, records, 1);
      yield* TerminalIndex.publish(first.index, identity);
      yield* TerminalIndex.close(first.index);
      const entries = yield* read(TerminalIndex.entriesName);
      const savedName = yield* offsetsFile(directory);
      const saved = yield* read(savedName);
      const head = yield* read(TerminalIndex.headName);
      const real = OffsetTable.decode(saved, entries.length);
      if (typeof real === "string") return expect.unreachable(real);
      const offsetsOf = (jobId: number) => real.get(jobId) ?? expect.unreachable(`job ${jobId}`);
      expect(offsetsOf(1).job).toBe(0);
      // Job 1's entry comes first: a flipped byte of its header (its sequence).
      const flippedEntries = Uint8Array.from(entries);
      flippedEntries[12] = (flippedEntries[12] ?? 0) ^ 1;
      yield* write(TerminalIndex.entriesName, flippedEntries);
      // From the offsets the open walks nothing: current, job 1's lookup fails typed, the rest answer.
      const opened = yield* TerminalIndex.open(directory, identity);
      expect(opened.stale).toBeUndefined();
      const one = TerminalIndex.lookupNow(opened.index, 1);
      expect(Either.isLeft(one) && one.left._tag).toBe("TerminalIndexCorrupt");
      for (const job of expected.filter((each) => each.jobId !== 1)) {
        expect(TerminalIndex.lookupNow(opened.index, job.jobId)).toEqual(Either.right(job));
      }
      yield* TerminalIndex.close(opened.index);
      // A torn, flipped or missing offsets file: the open walks, so it finds the flipped header
      // (and empties the index: its files are written again for the next case).
      // Flipped: job 1's offset (f64 at 48: after the 16-byte header and the page's index,
      // slot 3 of the triples) made job 2's, a well-formed table that only the CRC tells from
      // the saved one.
      const flippedSaved = Uint8Array.from(saved);
      new DataView(flippedSaved.buffer).setFloat64(48, offsetsOf(2).job, true);
      for (const damaged of [saved.subarray(0, saved.length - 8), flippedSaved, undefined]) {
        if (damaged === undefined) yield* removeOffsets(directory);
        else yield* write(savedName, damaged);
        const walked = yield* TerminalIndex.open(directory, identity);
        expect(walked.stale).toEqual({ _tag: "Corrupt", offset: 0, reason: "Corrupt" });
        yield* TerminalIndex.close(walked.index);
        yield* write(TerminalIndex.entriesName, flippedEntries);
        yield* write(TerminalIndex.headName, head);
      }
      // Offsets whose length and CRC HEAD names but which are wrong: written by hand.
      const publishTable = (table: OffsetTable) =>
        Effect.gen(function* () {
          const bytes = table.encode();
          if (bytes === undefined) return expect.unreachable("a little-endian host");
          const offsets = { bytes: bytes.length, crc: crc32c(bytes) };
          yield* write(TerminalIndex.offsetsFileName(identity, offsets), bytes);
          const head = encodeHead({ ...identity, entriesBytes: entries.length, offsets });
          if (Either.isLeft(head)) return expect.unreachable(head.left);
          yield* write(TerminalIndex.headName, head.right);
        });
      // An offset past the entries: refused, the open walks (and finds the flip).
      const outside = new OffsetTable();
      outside.setJob(2, entries.length + 28);
      yield* publishTable(outside);
      const walked = yield* TerminalIndex.open(directory, identity);
      expect(walked.stale?._tag).toBe("Corrupt");
      yield* TerminalIndex.close(walked.index);
      // Jobs 1 and 2 swapped, on intact entries: each lookup sees another job's entry and fails.
      yield* write(TerminalIndex.entriesName, entries);
      const swapped = new OffsetTable();
      swapped.setJob(1, offsetsOf(2).job);
      swapped.setJob(2, offsetsOf(1).job);
      swapped.setJob(3, offsetsOf(3).job);
      swapped.setResult(3, offsetsOf(1).result);
      yield* publishTable(swapped);
      const crossed = yield* TerminalIndex.open(directory, identity);
      expect(crossed.stale).toBeUndefined();
      for (const jobId of [1, 2, 3]) {
        const found = TerminalIndex.lookupNow(crossed.index, jobId);
        expect(Either.isLeft(found) && found.left._tag).toBe("TerminalIndexCorrupt");
        const page = TerminalIndex.lookupPageNow(crossed.index, [jobId]);
        expect(Either.isLeft(page) && page.left._tag).toBe("TerminalIndexCorrupt");
        const effect = yield* Effect.either(TerminalIndex.lookup(crossed.index, jobId));
        expect(Either.isLeft(effect) && effect.left._tag).toBe("TerminalIndexCorrupt");
      }
      yield* TerminalIndex.close(crossed.index);
    }).pipe(Effect.provide(nodeDisk)),
  );
  it("reads HEAD only as one record of its type and format, and names a file only by a 32-bit CRC", () => {
    const named = {
      ...identity,
      entriesBytes: 10,
      offsets: { bytes: 16, crc: 7 },
      image: { bytes: 20, crc: 8 },
    };
    const bytes = encodeHead(named);
    if (Either.isLeft(bytes)) return expect.unreachable(bytes.left);
    expect(decodeHead(bytes.right)).toEqual(named);
    const record = decodeRecord(bytes.right, 0);
    if (record._tag !== "Record") return expect.unreachable(record._tag);
    const value = decodeValue(record.record.payload);
    if (value._tag === "Left" || !(value.right instanceof Map)) {
      return expect.unreachable("HEAD's payload is a value map");
    }
    const fields = value.right;
    /** HEAD's fields with `changes`, framed as a record of `type`. */
    const framed = (type: number, changes: ReadonlyArray<readonly [string, Value.Value]>) => {
      const payload = encodeValue(new Map<string, Value.Value>([...fields, ...changes]));
      if (payload._tag === "Left") return expect.unreachable(payload.left._tag);
      const out = new Uint8Array(recordSize(payload.right.length));
      encodeRecordInto(out, 0, { type, schema: 1, sequence: 1, payload: payload.right });
      return out;
    };
    expect(decodeHead(framed(headType, []))).toEqual(named);
    expect(decodeHead(framed(headType + 1, []))).toBe("not a HEAD");
    expect(decodeHead(framed(headType, [["format", 2]]))).toBe("format 2, expected 1");
    const longer = new Uint8Array(bytes.right.length + 1);
    longer.set(bytes.right);
    expect(decodeHead(longer)).toBe("not a HEAD");
    // A CRC-32C has 32 bits: a larger one names no offsets file and no image.
    const wide = framed(headType, [
      ["offsets_crc", 2 ** 32 + 7],
      ["image_crc", 2 ** 32 + 8],
    ]);
    expect(decodeHead(wide)).toEqual({ ...named, offsets: undefined, image: undefined });
  });

  it("takes an entry only as the job or result whose id its record's sequence is", () => {
    const builder = Generation.start(0, { lean: true, collectLeft: true });
    for (const [at, record] of lifeOf(1, "with").entries()) {
      Generation.apply(builder, at + 1, record);
    }
    const buffer = TerminalIndex.entryBuffer();
    const placed = TerminalIndex.appendEntries(buffer, [Generation.takeLeft(builder)]);
    if (Either.isLeft(placed)) return expect.unreachable(placed.left);
    expect(placed.right.map(({ kind }) => kind)).toEqual(["job", "result"]);
    const bytes = buffer.bytes.subarray(0, buffer.length);
    for (const { kind, offset } of placed.right) {
      expect(TerminalIndex.entryAt(bytes, offset)._tag).toBe(kind === "job" ? "Job" : "Result");
      // The same event under sequence 2: an entry of job 2 that holds job 1.
      const record = decodeRecord(bytes, offset);
      if (record._tag !== "Record") return expect.unreachable(record._tag);
      const { type, schema, payload } = record.record;
      const renumbered = new Uint8Array(recordSize(payload.length));
      encodeRecordInto(renumbered, 0, { type, schema, sequence: 2, payload });
      expect(TerminalIndex.entryAt(renumbered, 0)._tag).toBe("Corrupt");
    }
  });
  it("keeps a job whose args a (7,3) cannot nest as a deep entry, and takes only a whole one", () => {
    // Args 62 and 63 deep: an insert holds them (1 level down), a one-job part (3 down) cannot.
    const nested = (depth: number): Value.Value => {
      let value: Value.Value = "leaf";
      for (let level = 1; level < depth; level++) value = [value];
      return value;
    };
    const builder = Generation.start(0, { lean: true, collectLeft: true });
    const lives = [61, 62, 63].flatMap((depth, at) => {
      const [inserted, ...rest] = lifeOf(at + 1, "with");
      if (inserted?._tag !== "JobInserted") return expect.unreachable("an insert first");
      return [Event.jobInserted({ ...inserted, args: nested(depth) }), ...rest];
    });
    for (const [at, record] of lives.entries()) Generation.apply(builder, at + 1, record);
    const buffer = TerminalIndex.entryBuffer();
    const placed = TerminalIndex.appendEntries(buffer, [Generation.takeLeft(builder)]);
    if (Either.isLeft(placed)) return expect.unreachable(placed.left);
    const bytes = buffer.bytes.subarray(0, buffer.length);
    const jobs = placed.right.filter(({ kind }) => kind === "job");
    const types = jobs.map(({ offset }) => {
      const record = decodeRecord(bytes, offset);
      return record._tag === "Record" ? record.record.type : -1;
    });
    // 61 deep still fits a part; 62 and 63 go as deep entries.
    expect(types).toEqual([7, deepJobType, deepJobType]);
    for (const [at, { jobId, offset }] of jobs.entries()) {
      const entry = TerminalIndex.entryAt(bytes, offset);
      if (entry._tag !== "Job") return expect.unreachable(entry._tag);
      expect(entry.job).toMatchObject({ jobId, args: nested(61 + at), state: "completed" });
      expect(decodeFrame(bytes, offset)).toMatchObject({ _tag: "Job", jobId });
    }
    // A deep entry whose part carries args of its own, or lacks `args`: not an entry.
    const deep = decodeRecord(bytes, jobs[1]?.offset ?? 0);
    if (deep._tag !== "Record") return expect.unreachable(deep._tag);
    const fields = decodeValue(deep.record.payload);
    if (fields._tag === "Left" || !(fields.right instanceof Map))
      return expect.unreachable("a map");
    const shallow = decodeRecord(bytes, jobs[0]?.offset ?? 0);
    if (shallow._tag !== "Record") return expect.unreachable(shallow._tag);
    const planted = (sequence: number, entries: Array<[string, Value.Value]>) => {
      const payload = encodeValue(new Map(entries));
      if (payload._tag === "Left") return expect.unreachable(payload.left._tag);
      const record = new Uint8Array(recordSize(payload.right.length));
      const fields = { type: deepJobType, schema: 1, sequence, payload: payload.right };
      encodeRecordInto(record, 0, fields);
      return TerminalIndex.entryAt(record, 0)._tag;
    };
    const args = fields.right.get("args") ?? null;
    const part = fields.right.get("part") ?? null;
    expect(
      planted(2, [
        ["args", args],
        ["part", part],
      ]),
    ).toBe("Job");
    // Under another job's id; a part whose job has args of its own (job 1's, 61 deep);
    // no args; a part that is not one.
    expect(
      planted(3, [
        ["args", args],
        ["part", part],
      ]),
    ).toBe("Corrupt");
    expect(
      planted(1, [
        ["args", args],
        ["part", shallow.record.payload],
      ]),
    ).toBe("Corrupt");
    expect(planted(2, [["part", part]])).toBe("Corrupt");
    expect(
      planted(2, [
        ["args", args],
        ["part", args],
      ]),
    ).toBe("Corrupt");
  });

  it.scopedLive(
    "walks only whole entries of a job's or a result's pair, and a reader checks their payloads too",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const builder = Generation.start(0, { lean: true, collectLeft: true });
        for (const [at, record] of [...lifeOf(1, "with"), ...lifeOf(2, "none")].entries()) {
          Generation.apply(builder, at + 1, record);
        }
        const buffer = TerminalIndex.entryBuffer();
        const placed = TerminalIndex.appendEntries(buffer, [Generation.takeLeft(builder)]);
        if (Either.isLeft(placed)) return expect.unreachable(placed.left);
        const entries = buffer.bytes.slice(0, buffer.length);
        /** The entries and a HEAD vouching for `entriesBytes` of them, with no offsets file: the open walks. */
        const planted = (bytes: Uint8Array, entriesBytes = bytes.length) =>
          Effect.promise(async () => {
            const index = TerminalIndex.indexPath(directory);
            await fs.mkdir(index, { recursive: true });
            await fs.writeFile(path.join(index, TerminalIndex.entriesName), bytes);
            const head = encodeHead({ ...identity, entriesBytes });
            if (Either.isLeft(head)) return expect.unreachable(head.left);
            await fs.writeFile(path.join(index, TerminalIndex.headName), head.right);
          });
        const staleness = Effect.gen(function* () {
          const opened = yield* TerminalIndex.open(directory, identity);
          yield* TerminalIndex.close(opened.index);
          return opened.stale;
        });
        yield* planted(entries);
        expect(yield* staleness).toBeUndefined();
        // HEAD vouches for bytes that end inside the last entry.
        yield* planted(entries, entries.length - 3);
        expect(yield* staleness).toMatchObject({ _tag: "Corrupt", reason: "a torn last entry" });
        // A job's and a result's record under another schema: whole records, not entries.
        for (const { kind, offset } of placed.right) {
          const record = decodeRecord(entries, offset);
          if (record._tag !== "Record") return expect.unreachable(record._tag);
          const { type, sequence, payload } = record.record;
          const other = Uint8Array.from(entries);
          encodeRecordInto(other, offset, { type, schema: 1, sequence, payload });
          yield* planted(other);
          expect(yield* staleness, kind).toMatchObject({
            _tag: "Corrupt",
            offset,
            reason: `not an entry (type ${type}, schema 1)`,
          });
        }
        // A flipped payload byte (the last entry's): the engine's walk leaves it to the lookup,
        // a reader's walk (no rebuild to fall back on) checks the record CRC.
        const flipped = Uint8Array.from(entries);
        flipped[flipped.length - 5] = (flipped[flipped.length - 5] ?? 0) ^ 0x01;
        yield* planted(flipped);
        const read = yield* TerminalIndex.openReadOnly(directory, identity);
        if (TerminalIndex.isIndex(read)) {
          yield* TerminalIndex.close(read);
          return expect.unreachable("a reader's walk checks every payload");
        }
        expect(read).toMatchObject({ _tag: "Corrupt", reason: "Corrupt" });
        expect(yield* staleness).toBeUndefined();
      }).pipe(Effect.provide(nodeDisk)),
  );
  it.scopedLive(
    "publishes nothing for a checkpoint whose image stops short: the HEAD before stays",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const { index } = yield* TerminalIndex.open(directory, identity);
        yield* indexed(index, lifeOf(1, "with"), 1);
        const image = { records: [new Uint8Array(8)], failure: () => undefined };
        expect(yield* TerminalIndex.publish(index, identity, image, true)).toBe(true);
        const headFile = path.join(TerminalIndex.indexPath(directory), TerminalIndex.headName);
        const before = yield* Effect.promise(() => fs.readFile(headFile));
        yield* indexed(index, lifeOf(2, "none"), 1);
        // A checkpoint (the image required) whose records stopped short: refused, nothing written.
        const later = { ...identity, lastSequence: identity.lastSequence + 3 };
        const stopped = { records: [new Uint8Array(8)], failure: () => "stopped short" };
        expect(yield* TerminalIndex.publish(index, later, stopped, true)).toBe(false);
        expect(yield* Effect.promise(() => fs.readFile(headFile))).toEqual(before);
        const names = yield* Effect.promise(() => fs.readdir(TerminalIndex.indexPath(directory)));
        expect(names).not.toContain(TerminalIndex.imageTemporaryName);
        expect(names.filter(TerminalIndex.isImageFile)).toHaveLength(1);
        // A close (the image not required): HEAD is published, naming no image.
        expect(yield* TerminalIndex.publish(index, later, stopped)).toBe(true);
        const head = decodeHead(yield* Effect.promise(() => fs.readFile(headFile)));
        expect(head).toMatchObject({ lastSequence: later.lastSequence, image: undefined });
        yield* TerminalIndex.close(index);
      }).pipe(Effect.provide(nodeDisk)),
  );
});
