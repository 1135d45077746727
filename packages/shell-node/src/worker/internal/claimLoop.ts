/**
 * The worker's claim loop: parks one waiting claim (`nextJobs`) with the
 * lanes that have room, starts what it answers, and claims again. A
 * promise loop, not a fiber: a claim costs the engine's command, nothing
 * more. Once a claim is decided its jobs are started and run, even when the
 * worker closes meanwhile: `stop` gives up a parked claim, and the close
 * waits for the loop to end (its last jobs started) rather than cutting it
 * short, then gives them its timeout like any running job.
 */
import type { Job } from "@tay/core";
import type * as Engine from "../../engine/Engine.js";
import type { Slots } from "./slots.js";

type NextJobs = (
  lanes: ReadonlyArray<Engine.Lane>,
  options: { readonly limit: number; readonly signal: AbortSignal },
) => Promise<ReadonlyArray<Job.Job>>;

export class ClaimLoop {
  private stopped = false;
  // The parked claim's controller, kept until it is used to give a claim up.
  private controller = new AbortController();
  // The queues of the claim in progress (undefined when none is parked).
  private claimQueues: ReadonlySet<string> | undefined;
  /** The loop, ending once stopped or once the engine refused a claim (never rejects). */
  readonly done: Promise<void>;

  constructor(
    private readonly slots: Slots,
    private readonly nextJobs: NextJobs,
    private readonly start: (job: Job.Job) => void,
  ) {
    // A queue that had no room has some again: a parked claim without it is
    // given up (answered with nothing) and claimed again with every lane.
    slots.onRelease = (queue) => {
      if (this.claimQueues !== undefined && !this.claimQueues.has(queue)) this.controller.abort();
    };
    // A claim the engine refuses (its log failed or closed) ends the loop: nothing more can start.
    this.done = this.loop().catch(() => {
      this.claimQueues = undefined;
    });
  }

  /** Claims no more: gives up a parked claim and ends a wait for room. */
  stop(): void {
    this.stopped = true;
    if (this.claimQueues !== undefined) this.controller.abort();
    this.slots.wake();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      await this.slots.roomOrWake();
      if (this.stopped) return;
      if (this.controller.signal.aborted) this.controller = new AbortController();
      const lanes = this.slots.lanes();
      this.claimQueues = new Set(lanes.map((lane) => lane.queue));
      const jobs = await this.nextJobs(lanes, {
        limit: this.slots.free(),
        signal: this.controller.signal,
      });
      this.claimQueues = undefined;
      for (const job of jobs) this.start(job);
    }
  }
}
