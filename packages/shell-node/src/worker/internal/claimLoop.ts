/**
 * The worker's claims: at most one waiting claim (`nextJobs`) at a time,
 * with the lanes that have room, its jobs started as it is answered, then
 * the next. No fiber and no loop waiting for room: a claim is issued when
 * room appears (a handler settles, a slot is released) and when the last
 * one is answered. Room that appears while a handler's end is being
 * recorded is claimed from a microtask queued before that end's command,
 * so that the claim joins the same batch (see slots.ts). Once a claim is
 * decided its jobs are started and run, even when the worker closes
 * meanwhile: `stop` gives up a parked claim, and the close waits for the
 * claim in flight to be answered (its last jobs started) rather than
 * cutting it short, then gives them its timeout like any running job.
 */
import type { Job } from "@tay/core";
import type * as Engine from "../../engine/Engine.js";
import type { Slots } from "./slots.js";

type NextJobs = (
  lanes: ReadonlyArray<Engine.Lane>,
  options: { readonly limit: number; readonly signal: AbortSignal },
) => Promise<ReadonlyArray<Job.Job>>;

const resolved = Promise.resolve();

export class ClaimLoop {
  private stopped = false;
  private soonQueued = false;
  // The claim in flight's controller, kept until it is used to give a claim up.
  private controller = new AbortController();
  // The lanes of the claim in flight (undefined when none is).
  private claimLanes: ReadonlyArray<Engine.Lane> | undefined;
  private ended: () => void = () => {};
  /** Ends once stopped with no claim in flight, or once the engine refused a claim (never rejects). */
  readonly done: Promise<void>;

  constructor(
    private readonly slots: Slots,
    private readonly nextJobs: NextJobs,
    private readonly start: (job: Job.Job) => void,
  ) {
    this.done = new Promise<void>((resolve) => {
      this.ended = resolve;
    });
    // A queue that had no room has some again: a claim in flight without it is
    // given up (answered with nothing) and claimed again with every lane.
    slots.onRoom = (queue) => {
      if (this.claimLanes === undefined) this.soon();
      else if (!this.claimLanes.some((lane) => lane.queue === queue)) this.controller.abort();
    };
    this.claim();
  }

  /** Claims no more: gives up a parked claim; `done` ends once no claim is in flight. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.claimLanes === undefined) this.ended();
    else this.controller.abort();
  }

  /**
   * Claims from a microtask: called as a handler settles, before its end's
   * command is issued, the claim is issued after that command and after
   * those of the other handlers settling in the same turn, before the
   * engine decides them.
   */
  private soon(): void {
    if (this.soonQueued || this.stopped) return;
    this.soonQueued = true;
    resolved.then(this.claimSoon);
  }

  private readonly claimSoon = (): void => {
    this.soonQueued = false;
    this.claim();
  };

  /** Issues a claim with the lanes that have room, unless one is in flight or none has room. */
  private claim(): void {
    if (this.stopped || this.claimLanes !== undefined) return;
    const lanes = this.slots.lanes();
    if (lanes.length === 0) return;
    if (this.controller.signal.aborted) this.controller = new AbortController();
    this.claimLanes = lanes;
    this.nextJobs(lanes, { limit: this.slots.free(), signal: this.controller.signal }).then(
      this.answered,
      // A claim the engine refuses (its log failed or closed) ends the claims: nothing more can start.
      () => {
        this.claimLanes = undefined;
        this.stopped = true;
        this.ended();
      },
    );
  }

  private readonly answered = (jobs: ReadonlyArray<Job.Job>): void => {
    this.claimLanes = undefined;
    for (const job of jobs) this.start(job);
    if (this.stopped) this.ended();
    else this.claim();
  };
}
