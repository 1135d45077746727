/**
 * The worker's claim loop alone, against a fake `nextJobs` whose answers,
 * decisions and refusals are the test's: while it waits for room after the
 * engine's backpressure refused a claim, room that frees up issues no claim
 * (the engine said it is full; a claim then would only be refused again),
 * and the claims go on once the wait ends; a loop stopped while its last
 * claim is in flight ends when backpressure refuses that claim (a close
 * waits for `done`), instead of waiting for room to claim nothing; a log
 * that refuses two claims in flight is told as Halted once; and room freed
 * while a claim was undecided is claimed as that claim is decided, to ride
 * its batch (docs/worker.md, "Claims in flight").
 */
import type { Job } from "@tay/core";
import { describe, expect, it } from "vitest";
import { Overloaded } from "../../src/engine/internal/commandQueue.js";
import type { Lane } from "../../src/engine/internal/engineRequest.js";
import { ClaimLoop } from "../../src/worker/internal/claimLoop.js";
import { Slots } from "../../src/worker/internal/slots.js";
import { insertedJob } from "../support/job.js";

/** One claim the fake engine received, settled as the test says. */
interface Received {
  readonly lanes: ReadonlyArray<Lane>;
  readonly limit: number;
  readonly decide: () => void;
  readonly answer: (jobs: ReadonlyArray<Job.Job>) => void;
  readonly refuse: (reason: unknown) => void;
}

/** A fake engine's `nextJobs`: every claim is kept, unsettled, in `received`. */
const fakeClaims = () => {
  const received: Array<Received> = [];
  const nextJobs = (
    lanes: ReadonlyArray<Lane>,
    options: { readonly limit: number; readonly onDecided: () => void },
  ) =>
    new Promise<ReadonlyArray<Job.Job>>((resolve, reject) => {
      received.push({
        lanes,
        limit: options.limit,
        decide: options.onDecided,
        answer: resolve,
        refuse: reject,
      });
    });
  return { received, nextJobs };
};

/** Lets the promise callbacks and microtasks queued so far run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("ClaimLoop", () => {
  it("issues no claim while it waits for room after backpressure, and claims once the wait ends", async () => {
    const slots = new Slots(new Map([["q", 2]]), 2);
    const { received, nextJobs } = fakeClaims();
    let roomCame = (): void => {};
    const roomWaits: Array<string> = [];
    const roomWait = () =>
      new Promise<void>((resolve) => {
        roomWaits.push("waiting");
        roomCame = resolve;
      });
    const started: Array<number> = [];
    const halted: Array<unknown> = [];
    const loop = new ClaimLoop(
      slots,
      nextJobs,
      (job) => slots.admit(job.queue, () => started.push(job.jobId)),
      (reason) => halted.push(reason),
      roomWait,
    );
    // The first claim takes one job: a slot is held, the other asked for again.
    received[0]?.decide();
    received[0]?.answer([insertedJob()]);
    await turn();
    expect(started).toEqual([1]);
    expect(received).toHaveLength(2);
    // The engine is full: the second claim is refused, and the worker waits for room.
    received[1]?.refuse(new Overloaded({ queuedCommandsMax: 1 }));
    await turn();
    expect(roomWaits).toEqual(["waiting"]);
    // The running job's handler settles meanwhile: its slot's room is told, and no claim follows.
    slots.finishing("q");
    slots.release("q", true);
    await turn();
    expect(received).toHaveLength(2);
    expect(halted).toEqual([]);
    // Room may have come: the worker claims again, with the room it has now.
    roomCame();
    await turn();
    expect(received).toHaveLength(3);
    expect(received[2]?.limit).toBe(2);
    // Stopped, the loop ends once the claim in flight is answered.
    loop.stop();
    received[2]?.answer([]);
    await loop.done;
  });

  it("ends once stopped when its last claim in flight is refused by backpressure", async () => {
    const slots = new Slots(new Map([["q", 1]]), 1);
    const { received, nextJobs } = fakeClaims();
    const roomWaits: Array<string> = [];
    // Room never comes: a stopped loop must not wait for it.
    const roomWait = () =>
      new Promise<void>(() => {
        roomWaits.push("waiting");
      });
    const halted: Array<unknown> = [];
    const loop = new ClaimLoop(
      slots,
      nextJobs,
      () => {},
      (reason) => halted.push(reason),
      roomWait,
    );
    let ended = false;
    void loop.done.then(() => {
      ended = true;
    });
    // The close begins while the claim is in flight; the engine then refuses it as full.
    loop.stop();
    received[0]?.refuse(new Overloaded({ queuedCommandsMax: 1 }));
    await turn();
    expect(ended).toBe(true);
    expect(roomWaits).toEqual([]);
    expect(halted).toEqual([]);
    expect(received).toHaveLength(1);
  });

  it("tells Halted once when both of its claims in flight are refused", async () => {
    const slots = new Slots(new Map([["q", 2]]), 2);
    const { received, nextJobs } = fakeClaims();
    const halted: Array<unknown> = [];
    const loop = new ClaimLoop(
      slots,
      nextJobs,
      (job) => slots.admit(job.queue, () => {}),
      (reason) => halted.push(reason),
      () => new Promise<void>(() => {}),
    );
    // A claim takes one job of two slots and the next is issued for the other: two in flight.
    received[0]?.answer([insertedJob()]);
    await turn();
    received[1]?.decide();
    await turn();
    slots.finishing("q");
    await turn();
    expect(received).toHaveLength(3);
    // The log failed: the engine refuses both.
    received[1]?.refuse(new Error("the log failed"));
    received[2]?.refuse(new Error("the log failed"));
    await loop.done;
    expect(halted).toHaveLength(1);
  });

  it("claims room freed while a claim was undecided as soon as that claim is decided", async () => {
    const slots = new Slots(new Map([["q", 2]]), 2);
    const { received, nextJobs } = fakeClaims();
    const loop = new ClaimLoop(
      slots,
      nextJobs,
      (job) => slots.admit(job.queue, () => {}),
      () => {},
      () => new Promise<void>(() => {}),
    );
    // One job runs; a claim for the other slot is in flight, not decided yet.
    received[0]?.answer([insertedJob()]);
    await turn();
    expect(received).toHaveLength(2);
    // The job's handler settles: its slot's room is the undecided claim's queue's, so no claim yet.
    slots.finishing("q");
    await turn();
    expect(received).toHaveLength(2);
    // Decided (its jobs on their way to the disk): the freed room is claimed now, to ride that
    // batch, not once the claim is answered.
    received[1]?.decide();
    await turn();
    expect(received).toHaveLength(3);
    expect(received[2]?.limit).toBe(1);
    loop.stop();
    received[1]?.answer([]);
    received[2]?.answer([]);
    await loop.done;
  });
});
