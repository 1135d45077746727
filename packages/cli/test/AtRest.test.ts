// The read commands on a store at rest through its terminal index (issue 19): `tay status`,
// `tay jobs` (every state and queue filter, limits inside and past the completed jobs) and
// `tay job` (every id, its history included) answer byte for byte what they answer from the
// whole fold (the index deleted: the reference; and the state image alone deleted, which
// `status` and `jobs` resume from), on stores an engine wrote with random
// workloads (unique keys, results, failures, cancellations, redrives, compactions). The index
// is used only when current (a lean state and the index, checked through `withAtRest`); one
// whose HEAD names another sequence, whose bytes were flipped, or that the disk will not read,
// is not used, and the answers stay the reference's. Nothing the commands do writes a byte of the store or its index.
import * as fs from "node:fs/promises";
import * as path from "node:path";
import {
  crc32c,
  decodeSegmentFooter,
  encodeSegmentFooter,
  segmentFooterBytes,
  segmentHeaderBytes,
} from "@tay/codec";
import { Event, type Job, Query, State } from "@tay/core";
import { EnginePromises, NodeDisk, StateProjection, TerminalIndex } from "@tay/shell-node";
import { Effect, Either } from "effect";
import * as fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jobAt, keptTail, type Listable, leanStateAt, listed, withAtRest } from "../src/atRest.js";
import { everyId, type Filter, oneJob } from "../src/listingFold.js";
import { inspect } from "../src/inspect.js";
import * as Json from "../src/json.js";
import { removeTemporary, runInProcess, temporaryDirectory } from "./support/cli.js";

let root = "";
let dir = "";

beforeEach(async () => {
  root = await temporaryDirectory();
  dir = path.join(root, "data");
});
afterEach(async () => {
  await removeTemporary(root);
});

/** Runs `Cli.run` in this process: its status and what it printed. */
const run = runInProcess;

type Step =
  | { readonly _tag: "insert"; readonly queue: string; readonly key: string | null }
  | { readonly _tag: "complete"; readonly result: boolean }
  | { readonly _tag: "fail" }
  | { readonly _tag: "cancel"; readonly pick: number }
  | { readonly _tag: "redrive"; readonly pick: number }
  | { readonly _tag: "compact" };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      _tag: fc.constant("insert" as const),
      queue: fc.constantFrom("a", "b"),
      key: fc.oneof(
        { weight: 3, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constantFrom("k1", "k2") },
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ _tag: fc.constant("complete" as const), result: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("fail" as const) }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("cancel" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("redrive" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("compact" as const) }) },
);

/** Plays `steps` on a new store in `dir` and closes it (the index published): the last job id. */
const written = async (
  steps: ReadonlyArray<Step>,
  options: EnginePromises.OpenOptions = { createIfMissing: true },
): Promise<number> => {
  const engine = await EnginePromises.open(dir, options);
  for (const [index, planned] of steps.entries()) {
    const queue = index % 2 === 0 ? "a" : "b";
    const ids = (state: Event.JobState) => engine.jobs({ state }).map((job) => job.jobId);
    switch (planned._tag) {
      case "insert":
        await engine.insert({
          queue: planned.queue,
          worker: "W",
          args: { index },
          maxAttempts: 1,
          ...(planned.key === null ? {} : { uniqueKey: planned.key }),
        });
        break;
      case "complete":
      case "fail": {
        const [job] = await engine.claim(queue, 1);
        if (job === undefined) break;
        if (planned._tag === "fail") await engine.fail(job.jobId, "boom");
        else await engine.complete(job.jobId, planned.result ? { index } : undefined);
        break;
      }
      case "cancel": {
        const live = [...ids("available"), ...ids("scheduled")];
        const jobId = live[planned.pick % Math.max(1, live.length)];
        if (jobId !== undefined) await engine.cancel(jobId);
        break;
      }
      case "redrive": {
        const dead = [...ids("discarded"), ...ids("cancelled")];
        const jobId = dead[planned.pick % Math.max(1, dead.length)];
        if (jobId !== undefined) await engine.redrive(jobId).catch(() => undefined);
        break;
      }
      case "compact":
        // A day's retention keeps every job: the index is rewritten for the new generation.
        await engine.compact(86_400_000);
        break;
    }
  }
  const lastJobId = engine.state().lastJobId;
  await engine.close();
  return lastJobId;
};

/** Every answer the read commands give about the store in `dir`. */
const answers = async (lastJobId: number) => {
  const all = [];
  all.push(await run(["status", dir, "--json"]));
  all.push(await run(["status", dir]));
  for (const state of [undefined, ...Event.jobStates]) {
    for (const queue of [undefined, "a", "b"]) {
      const filters = [
        ...(state === undefined ? [] : ["--state", state]),
        ...(queue === undefined ? [] : ["--queue", queue]),
      ];
      all.push(await run(["jobs", dir, ...filters, "--json"]));
    }
  }
  for (const limit of ["0", "1", "2", "5"]) {
    all.push(await run(["jobs", dir, "--limit", limit]));
    all.push(await run(["jobs", dir, "--state", "completed", "--limit", limit, "--json"]));
    all.push(await run(["jobs", dir, "--state", "completed", "--queue", "b", "--limit", limit]));
  }
  for (let jobId = 1; jobId <= lastJobId + 1; jobId++) {
    all.push(await run(["job", dir, `${jobId}`, "--json"]));
    all.push(await run(["job", dir, `${jobId}`]));
  }
  return all;
};

/** Whether the read commands take the index (a lean state with it), as `jobs` would. */
const usesIndex = () =>
  Effect.runPromise(
    withAtRest(dir, true, (atRest) =>
      Effect.succeed(atRest.index !== undefined && atRest.state.lean),
    ).pipe(Effect.provide(NodeDisk.layer)),
  );

/** For each job id, whether `tay job` would answer it from the index or from the whole fold. */
const answeredFrom = async (lastJobId: number) => {
  const from: Array<string> = [];
  for (let jobId = 1; jobId <= lastJobId; jobId++) {
    const where = await Effect.runPromise(
      withAtRest(dir, true, (atRest) =>
        Either.map(jobAt(atRest, jobId), () =>
          atRest.index === undefined ? "whole fold" : "index",
        ),
      ).pipe(Effect.provide(NodeDisk.layer)),
    );
    from.push(where);
  }
  return from;
};

/**
 * Steps played by an engine that closes (HEAD and its image published),
 * then steps played by one without the index: HEAD behind the log. No
 * compaction after: the epoch it starts leaves HEAD stale (the whole fold).
 */
const closedThenPlayed = (afterMin: number, afterMax: number) =>
  fc.tuple(
    fc.array(step, { minLength: 10, maxLength: 30 }),
    fc.array(
      step.filter((planned) => planned._tag !== "compact"),
      { minLength: afterMin, maxLength: afterMax },
    ),
  );

/** Every job `jobs` lists, and whether the index (not the whole fold) answered. */
const listedFrom = () =>
  Effect.runPromise(
    withAtRest(dir, true, (atRest) => {
      const jobs: Array<Job.Job> = [];
      return Effect.as(
        listed(
          atRest,
          {
            queue: undefined,
            state: undefined,
            limit: Number.MAX_SAFE_INTEGER,
            descending: false,
            ...everyId,
          },
          (page) =>
            Effect.sync(() => {
              jobs.push(...page);
            }),
        ),
        { index: atRest.index !== undefined, jobs },
      );
    }).pipe(Effect.provide(NodeDisk.layer)),
  );

/** Every listing of a filter's kinds: states, queues, orders and limits, within `bounds`. */
const listingFilters = (
  bounds: ReadonlyArray<{ readonly first: number; readonly last: number }>,
) => {
  const filters: Array<Filter> = [];
  for (const state of [undefined, "completed", "available"] as const) {
    for (const queue of [undefined, "b"]) {
      for (const limit of [0, 1, 3, Number.MAX_SAFE_INTEGER]) {
        for (const descending of [false, true]) {
          for (const bound of bounds) filters.push({ state, queue, limit, descending, ...bound });
        }
      }
    }
  }
  return filters;
};

/** The jobs `listed` gives of `listable` for `filter`, every page. */
const listedOf = (listable: Listable, filter: Filter) => {
  const jobs: Array<Job.Job> = [];
  return Effect.runPromise(
    Effect.as(
      listed(listable, filter, (page) =>
        Effect.sync(() => {
          jobs.push(...page);
        }),
      ),
      jobs,
    ),
  );
};

/** Every file of the store and its bytes: what a read command must leave as it found it. */
const files = async (): Promise<Map<string, string>> => {
  const found = new Map<string, string>();
  const walk = async (at: string): Promise<void> => {
    for (const entry of await fs.readdir(at, { withFileTypes: true })) {
      const child = path.join(at, entry.name);
      if (entry.isDirectory()) await walk(child);
      else found.set(child, (await fs.readFile(child)).toString("base64"));
    }
  };
  await walk(dir);
  return found;
};

/** Removes the state image(s) beside the index. */
const removeImages = async () => {
  for (const name of await fs.readdir(TerminalIndex.indexPath(dir))) {
    if (TerminalIndex.isImageFile(name)) await fs.rm(path.join(TerminalIndex.indexPath(dir), name));
  }
};

const indexFile = () => path.join(TerminalIndex.indexPath(dir), TerminalIndex.entriesName);

describe("the read commands at rest", () => {
  it("answer from a current index what they answer from the whole fold", async () => {
    const samples = fc.sample(fc.array(step, { minLength: 20, maxLength: 40 }), {
      numRuns: 8,
      seed: 20261202,
    });
    let fromIndex = 0;
    for (const steps of samples) {
      await fs.rm(dir, { recursive: true, force: true });
      const lastJobId = await written(steps);
      const before = await files();
      const indexed = await answers(lastJobId);
      expect(await files()).toEqual(before);
      if (await usesIndex()) fromIndex += 1;
      // `status` and `jobs` resumed from the state image the close wrote: the same
      // answers with the image gone (every record folded, the index still used).
      await removeImages();
      expect(await answers(lastJobId)).toEqual(indexed);
      await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
      expect(await usesIndex()).toBe(false);
      expect(indexed).toEqual(await answers(lastJobId));
    }
    // Most samples left completed jobs without a key: those answered from the index.
    expect(fromIndex).toBeGreaterThan(3);
  });

  it("answer from an index behind the log, caught up from the state image, what they answer from the whole fold", async () => {
    // What a crash after a checkpoint leaves, or an engine without the index after a close:
    // HEAD and its image at an earlier sequence than the log's last.
    const samples = fc.sample(closedThenPlayed(5, 20), { numRuns: 5, seed: 20261205 });
    let caughtUp = 0;
    for (const [before, after] of samples) {
      await fs.rm(dir, { recursive: true, force: true });
      await written(before);
      const lastJobId = await written(after, { terminalIndex: false });
      if (await usesIndex()) {
        caughtUp += 1;
        // Listed by the index and the tail, not by the whole fold a missing record falls back to.
        const listing = await listedFrom();
        expect(listing.index).toBe(true);
        expect(listing.jobs.map((job) => job.jobId)).toEqual(
          Array.from({ length: lastJobId }, (_, at) => at + 1),
        );
      }
      const answered = await answers(lastJobId);
      await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
      expect(answered).toEqual(await answers(lastJobId));
    }
    expect(caughtUp).toBeGreaterThan(2);
  });

  it("`job` answers every job as the full fold holds it, with no index, a current one or one behind", async () => {
    // `tay job` keeps the one job's record as the lean fold lets it go (2026-12-05): the
    // reference here is the fold that keeps every job whole, not another read command.
    const samples = fc.sample(closedThenPlayed(0, 10), { numRuns: 4, seed: 20261206 });
    for (const [before, after] of samples) {
      await fs.rm(dir, { recursive: true, force: true });
      await written(before);
      const lastJobId = await written(after, { terminalIndex: false });
      const full = await Effect.runPromise(inspect(dir).pipe(Effect.provide(NodeDisk.layer)));
      for (const removed of [false, true]) {
        if (removed) await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
        // Without a usable index, the fold kept one job's record: a lean state, not the whole fold.
        const history = { onStart: () => {}, onRecord: () => {} };
        const lean = await Effect.runPromise(
          withAtRest(
            dir,
            true,
            (atRest) => Effect.succeed(atRest.state.lean),
            history,
            oneJob(1),
          ).pipe(Effect.provide(NodeDisk.layer)),
        );
        expect(lean).toBe(true);
        for (let jobId = 1; jobId <= lastJobId; jobId++) {
          const answered = await run(["job", dir, `${jobId}`, "--json"]);
          const whole = State.job(full.state, jobId);
          if (whole === undefined) return expect.unreachable(`job ${jobId} in the full fold`);
          expect(JSON.parse(answered.stdout).job).toEqual(
            JSON.parse(JSON.stringify(Json.job(whole))),
          );
        }
      }
    }
  });

  it("list more completed jobs than one page of the index holds, in order, as the whole fold does", async () => {
    // Past 1,024 ids the index is read a page at a time (`listed`): three pages and a part.
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    const total = 3 * 1024 + 7;
    for (let from = 0; from < total; from += 500) {
      const count = Math.min(500, total - from);
      const jobs = Array.from({ length: count }, (_, index) => ({
        queue: "a",
        worker: "W",
        args: { n: from + index },
      }));
      await engine.insertMany(jobs);
      for (const job of await engine.claim("a", count)) {
        // Every third one stays executing: whole jobs between the facts.
        if (job.jobId % 3 !== 0) await engine.complete(job.jobId, job.jobId);
      }
    }
    await engine.close();
    expect(await usesIndex()).toBe(true);
    // Answered by the index itself, not by the whole fold a failed page would fall back to.
    const fromIndex = await listedFrom();
    expect(fromIndex.index).toBe(true);
    expect(fromIndex.jobs.map((job) => job.jobId)).toEqual(
      Array.from({ length: total }, (_, at) => at + 1),
    );
    const listings = async () => [
      await run(["jobs", dir, "--json"]),
      await run(["jobs", dir, "--state", "completed", "--json"]),
      await run(["jobs", dir, "--limit", "2050", "--json"]),
    ];
    const answered = await listings();
    await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
    expect(answered).toEqual(await listings());
  });

  // 2026-12-07: without a usable index a listing folds lean and keeps only the records it can
  // print (`listingFold.ts`), where it folded whole before.
  it("list without an index what the whole fold lists, for every filter, order, bound and limit, keeping no more than the limit", async () => {
    const samples = fc.sample(fc.array(step, { minLength: 20, maxLength: 40 }), {
      numRuns: 6,
      seed: 20261208,
    });
    let kept = 0;
    for (const steps of samples) {
      await fs.rm(dir, { recursive: true, force: true });
      const lastJobId = await written(steps);
      await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
      const whole = await Effect.runPromise(inspect(dir).pipe(Effect.provide(NodeDisk.layer)));
      const bounds = [everyId, { first: 3, last: lastJobId - 2 }, { first: 2, last: 2 }];
      for (const filter of listingFilters(bounds)) {
        const expected = await listedOf({ state: whole.state, index: undefined }, filter);
        const got = await Effect.runPromise(
          withAtRest(
            dir,
            true,
            (atRest) =>
              Effect.map(
                Effect.promise(() => listedOf(atRest, filter)),
                (jobs) => ({
                  jobs,
                  lean: atRest.state.lean,
                  kept: atRest.tail?.jobs.size ?? 0,
                }),
              ),
            undefined,
            filter,
          ).pipe(Effect.provide(NodeDisk.layer)),
        );
        expect(got.jobs, JSON.stringify(filter)).toEqual(expected);
        expect(got.kept).toBeLessThanOrEqual(filter.limit);
        // Lean, from the records kept: never the whole fold's fallback (core hands every one
        // over); whole only for a listing of every completed job, which holds them all anyway.
        const everyCompleted =
          filter.limit === Number.MAX_SAFE_INTEGER &&
          filter.queue === undefined &&
          filter.first === everyId.first &&
          filter.state !== "available";
        expect(got.lean, JSON.stringify(filter)).toBe(!everyCompleted);
        if (got.kept > 0) kept += 1;
      }
    }
    // Most stores held completed jobs without a key, listed from the records kept.
    expect(kept).toBeGreaterThan(100);
  });

  it("refuse, naming the store and the job, to list a fact whose record a lean fold did not keep", async () => {
    const engine = await EnginePromises.open(dir, { createIfMissing: true });
    await engine.insertMany([1, 2].map((n) => ({ queue: "a", worker: "W", args: n })));
    for (const job of await engine.claim("a", 2)) await engine.complete(job.jobId);
    await engine.close();
    const lean = await Effect.runPromise(
      inspect(dir, StateProjection.leanFoldProjection).pipe(Effect.provide(NodeDisk.layer)),
    );
    const job2 = State.job(
      (await Effect.runPromise(inspect(dir).pipe(Effect.provide(NodeDisk.layer)))).state,
      2,
    );
    if (job2 === undefined) return expect.unreachable("job 2 is in the whole fold");
    const filter = { ...everyId, queue: undefined, state: undefined, limit: 5, descending: false };
    const tail = keptTail(dir, 0, new Map([[2, job2]]));
    const refused = await Effect.runPromise(
      Effect.either(
        listed({ state: lean.state, index: undefined, tail }, filter, () => Effect.void),
      ),
    );
    if (Either.isRight(refused)) return expect.unreachable("job 1 has no record");
    expect(refused.left.message).toBe(
      `RecordNotKept ${dir}: completed job 1: the listing's lean fold kept no record of it (a defect of tay's; nothing was changed)`,
    );
  });

  it("`queues` and `schedules` read the lean state: the counts, queue states and schedules of the whole fold", async () => {
    // Before 2026-12-07 both folded every job whole (4.4 s and 600 MB on 1,000,000 jobs).
    const samples = fc.sample(fc.array(step, { minLength: 10, maxLength: 30 }), {
      numRuns: 4,
      seed: 20261207,
    });
    for (const steps of samples) {
      await fs.rm(dir, { recursive: true, force: true });
      const engine = await EnginePromises.open(dir, { createIfMissing: true });
      await engine.registerSchedule("nightly", {
        queue: "a",
        worker: "W",
        args: null,
        priority: 0,
        maxAttempts: 1,
        everyMs: 86_400_000,
        cron: null,
        overlap: "skip",
      });
      await engine.pauseQueue("b");
      await engine.close();
      await written(steps, {});
      const lean = await Effect.runPromise(leanStateAt(dir).pipe(Effect.provide(NodeDisk.layer)));
      const whole = await Effect.runPromise(
        Effect.map(inspect(dir), ({ state }) => state).pipe(Effect.provide(NodeDisk.layer)),
      );
      expect(lean.lean).toBe(true);
      expect(Query.counts(lean)).toEqual(Query.counts(whole));
      expect([...State.schedules(lean)]).toEqual([...State.schedules(whole)]);
      expect([...lean.queues.entries()]).toEqual([...whole.queues.entries()]);
      const listed = [
        await run(["queues", dir, "--json"]),
        await run(["schedules", dir, "--json"]),
      ];
      expect(listed.map((answer) => answer.status)).toEqual([0, 0]);
      expect(listed[0]?.stdout).toContain('"paused":true');
      expect(listed[1]?.stdout).toContain('"nightly"');
    }
  });

  it("read sealed segments' records on trust of their segment CRC, as the engine's open does; verify checks each", async () => {
    const engine = await EnginePromises.open(dir, {
      createIfMissing: true,
      rotationTargetBytes: 400,
    });
    for (let index = 0; index < 8; index++) {
      await engine.insert({ queue: "a", worker: "W", args: { index } });
    }
    await engine.close();
    const first = path.join(
      dir,
      "epochs",
      "00000000000000000001",
      "segments",
      "00000000000000000001.tay",
    );
    const original = await fs.readFile(first);
    const footerAt = original.length - segmentFooterBytes;
    const footer = decodeSegmentFooter(original.subarray(footerAt));
    if (footer._tag === "Left") return expect.unreachable("a sealed first segment");
    // A writer that hashed record 1 wrongly and sealed the bytes as written: the segment CRC
    // vouches for them, record 1's own CRC does not.
    const length = original.readUInt32BE(segmentHeaderBytes + 16);
    const wrong = Uint8Array.from(original);
    const crcAt = segmentHeaderBytes + 24 + length;
    wrong[crcAt] = (wrong[crcAt] ?? 0) ^ 0x01;
    wrong.set(
      encodeSegmentFooter({ ...footer.right, segmentCrc: crc32c(wrong.subarray(0, footerAt)) }),
      footerAt,
    );
    await fs.writeFile(first, wrong);
    expect((await run(["status", dir])).status).toBe(0);
    expect((await run(["jobs", dir])).status).toBe(0);
    expect((await run(["job", dir, "1"])).status).toBe(0);
    const verified = await run(["verify", dir]);
    expect(verified.status).not.toBe(0);
    expect(verified.stderr).toContain("RecordChecksum");
    // A flipped byte fails the segment CRC, and the second reading names its record.
    const flipped = Uint8Array.from(original);
    flipped[segmentHeaderBytes + 30] = (flipped[segmentHeaderBytes + 30] ?? 0) ^ 0x10;
    await fs.writeFile(first, flipped);
    for (const command of [
      ["status", dir],
      ["jobs", dir],
      ["job", dir, "1"],
    ]) {
      const refused = await run(command);
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain(
        `RecordChecksum ${first} at offset ${segmentHeaderBytes} sequence 1`,
      );
    }
  });

  it("fold whole when HEAD names another sequence, or the entries were flipped or unreadable", async () => {
    const steps: Array<Step> = [];
    for (let index = 0; index < 6; index++) {
      steps.push({ _tag: "insert", queue: index % 2 === 0 ? "a" : "b", key: null });
    }
    for (let index = 0; index < 6; index++) steps.push({ _tag: "complete", result: true });
    const lastJobId = await written(steps);
    expect(await usesIndex()).toBe(true);
    const head = await fs.readFile(path.join(TerminalIndex.indexPath(dir), TerminalIndex.headName));
    const entries = await fs.readFile(indexFile());
    // An engine without the index appends: HEAD still names the sequence before.
    const plain = await EnginePromises.open(dir, { terminalIndex: false });
    await plain.insert({ queue: "a", worker: "W", args: 7 });
    const [job] = await plain.claim("a", 1);
    if (job !== undefined) await plain.complete(job.jobId, "late");
    await plain.close();
    // Resumed from the image HEAD names: the index as HEAD left it, the job
    // completed after it from the fold (2026-12-05).
    expect(await usesIndex()).toBe(true);
    const caughtUp = await answers(lastJobId + 1);
    // Without the image nothing resumes, and the index is behind: the whole fold.
    await removeImages();
    expect(await usesIndex()).toBe(false);
    const behind = await answers(lastJobId + 1);
    await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
    const reference = await answers(lastJobId + 1);
    expect(behind).toEqual(reference);
    expect(caughtUp).toEqual(reference);
    // A current HEAD over entries whose bytes changed: the open takes the offsets saved with
    // HEAD and reads no entry (2026-12-04), the lookup of the changed entry fails its check,
    // and that command folds the log whole; the others answer from the index.
    const fresh = await EnginePromises.open(dir);
    await fresh.close();
    expect(await usesIndex()).toBe(true);
    const flipped = await fs.readFile(indexFile());
    flipped[flipped.length - 3] = (flipped[flipped.length - 3] ?? 0) ^ 0x10;
    await fs.writeFile(indexFile(), flipped);
    expect(await usesIndex()).toBe(true);
    const from = await answeredFrom(lastJobId + 1);
    expect(from).toContain("index");
    expect(from).toContain("whole fold");
    const damaged = await answers(lastJobId + 1);
    await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
    expect(damaged).toEqual(await answers(lastJobId + 1));
    // Entries the disk will not read (a directory in their place): not used, no failure.
    const again = await EnginePromises.open(dir);
    await again.close();
    expect(await usesIndex()).toBe(true);
    await fs.rm(indexFile());
    await fs.mkdir(indexFile());
    expect(await usesIndex()).toBe(false);
    const unreadable = await answers(lastJobId + 1);
    await fs.rm(TerminalIndex.indexPath(dir), { recursive: true });
    expect(unreadable).toEqual(await answers(lastJobId + 1));
    expect(head.length).toBeGreaterThan(0);
    expect(entries.length).toBeGreaterThan(0);
  });
});
