/**
 * One attempt's bookkeeping alone, where the order of aborts and reads is
 * the test's: the first abort's reason is the one kept, a signal made after
 * the abort is aborted already, an abort's listener added late is told at
 * once; and the error text a failed attempt records, cut to the log's
 * 65,535 bytes on a character boundary.
 */
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Init from "../../src/store/Init.js";
import {
  Attempt,
  type AttemptSettings,
  errorBytesMax,
  errorText,
  runAttempt,
  type WorkerEvent,
} from "../../src/worker/internal/attempt.js";
import { insertedJob as job } from "../support/job.js";

const messageOf = (signal: AbortSignal): string =>
  signal.reason instanceof Error ? signal.reason.message : String(signal.reason);

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;

describe("Attempt", () => {
  it("keeps the first abort's reason, for the signal and for its listener", () => {
    const attempt = new Attempt(job());
    const told: Array<string> = [];
    attempt.whenAborted((reason) => told.push(reason));
    const { signal } = attempt;
    attempt.abort("timeout");
    attempt.abort("interrupted");
    expect(attempt.reason).toBe("timeout");
    expect(told).toEqual(["timeout"]);
    expect(signal.aborted).toBe(true);
    expect(messageOf(signal)).toBe("the attempt was aborted: timeout");
  });

  it("a signal first read after the abort is aborted; a listener added then is told at once", () => {
    const attempt = new Attempt(job());
    attempt.abort("ended");
    expect(attempt.signal.aborted).toBe(true);
    expect(messageOf(attempt.signal)).toBe("the attempt was aborted: ended");
    const told: Array<string> = [];
    attempt.whenAborted((reason) => told.push(reason));
    expect(told).toEqual(["ended"]);
  });
});

/** An engine on a fault disk holding one job of worker W, claimed: its attempt 1, not begun. */
const claimedJob = async () => {
  const disk = FaultDisk.make();
  disk.seedDirectory("/data");
  const layer = FaultDisk.layer(disk);
  await Effect.runPromise(Effect.provide(Init.init("/data"), layer));
  const engine = await EnginePromises.open("/data", { disk: layer });
  await engine.insert({ queue: "q", worker: "W", args: 1 });
  const [claimed] = await engine.claim("q", 1);
  if (claimed === undefined) throw new Error("nothing claimed");
  return { engine, attempt: new Attempt(claimed) };
};

const settingsOf = (handler: () => unknown, events: Array<WorkerEvent>): AttemptSettings => ({
  handlers: { W: handler },
  backoff: undefined,
  emit: (event) => events.push(event),
  now: () => 0,
  roomWait: () => Promise.resolve(),
  recording: () => {},
  progress: () => Promise.resolve(),
});

describe("runAttempt", () => {
  it("never calls the handler of an attempt aborted before it began; it fails with the reason", async () => {
    const { engine, attempt } = await claimedJob();
    let calls = 0;
    const events: Array<WorkerEvent> = [];
    attempt.abort("interrupted");
    await runAttempt(
      engine,
      attempt,
      settingsOf(() => (calls += 1), events),
    );
    expect(calls).toBe(0);
    expect(engine.job(1)?.errors.map((error) => error.error)).toEqual(["interrupted"]);
    expect(events.map((event) => event._tag)).toEqual(["Started", "Retried"]);
    await engine.close();
  });

  it("an abort during the handler decides the end, whatever the handler returns after it", async () => {
    const { engine, attempt } = await claimedJob();
    const events: Array<WorkerEvent> = [];
    const handler = () => {
      attempt.abort("timeout");
      return "a result";
    };
    await runAttempt(engine, attempt, settingsOf(handler, events));
    expect(engine.job(1)?.state).toBe("retryable");
    expect(engine.job(1)?.errors.map((error) => error.error)).toEqual(["timeout"]);
    await engine.close();
  });
});

describe("runAttempt's refusals", () => {
  it("tells a refusal other than a stale attempt as Unrecorded, with the engine's message", async () => {
    const { engine, attempt } = await claimedJob();
    const events: Array<WorkerEvent> = [];
    // An attempt of a job the store never had: the engine refuses its end as JobNotFound.
    const stranger = new Attempt({ ...attempt.job, jobId: 99 });
    await runAttempt(
      engine,
      stranger,
      settingsOf(() => "done", events),
    );
    const [started, told] = events;
    expect(started?._tag).toBe("Started");
    expect(told?._tag).toBe("Unrecorded");
    expect(told?._tag === "Unrecorded" && told.error).toMatch(/JobNotFound/);
    await engine.close();
  });
});

describe("runAttempt's results", () => {
  it("records a handler's null as the result null, and nothing returned as no result", async () => {
    const returningNull = await claimedJob();
    await runAttempt(
      returningNull.engine,
      returningNull.attempt,
      settingsOf(() => null, []),
    );
    expect(returningNull.engine.job(1)?.result?.value).toBeNull();
    await returningNull.engine.close();
    const returningNothing = await claimedJob();
    await runAttempt(
      returningNothing.engine,
      returningNothing.attempt,
      settingsOf(() => {}, []),
    );
    expect(returningNothing.engine.job(1)?.state).toBe("completed");
    expect(returningNothing.engine.job(1)?.result).toBeNull();
    await returningNothing.engine.close();
  });
});

describe("errorText", () => {
  it("is an error's message, or its name when the message is empty", () => {
    expect(errorText(new RangeError("out of range"))).toBe("out of range");
    expect(errorText(new TypeError(""))).toBe("TypeError");
    expect(errorText("plain")).toBe("plain");
    expect(errorText({ code: 7 })).toBe('{"code":7}');
  });

  it("keeps a text of exactly the log's bound whole and cuts a longer one to it", () => {
    const bound = "a".repeat(errorBytesMax);
    expect(errorText(bound)).toBe(bound);
    expect(errorText(`${bound}b`)).toBe(bound);
  });

  it("cuts on a character boundary, dropping a character the bound splits", () => {
    // Two-byte characters: the bound (odd) falls inside one of them.
    const text = "é".repeat(40_000);
    const cut = errorText(text);
    expect(utf8Bytes(cut)).toBeLessThanOrEqual(errorBytesMax);
    expect(cut).not.toContain("\uFFFD");
    expect(text.startsWith(cut)).toBe(true);
    expect(cut.length).toBe(Math.floor(errorBytesMax / 2));
  });
});
