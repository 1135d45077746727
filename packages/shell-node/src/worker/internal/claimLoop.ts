/**
 * The worker's claims: waiting claims (`nextJobs`) for the room its lanes
 * have, each claim's jobs started as it is answered. No fiber and no loop
 * waiting for room: a claim is issued when room appears that no claim in
 * flight was promised (a handler settles, a slot is released, a claim is
 * answered with fewer jobs than it could take). Several claims may be in
 * flight at once, so room that appears while one is being written is
 * claimed in the next batch instead of waiting for it: handlers that end
 * at different times never settle into groups that take turns at the
 * disk. Room that appears while a handler's end is being recorded is
 * claimed from a microtask queued before that end's command, so that the
 * claim joins the same batch (see slots.ts). Once a claim is decided its
 * jobs are started and run, even when the worker closes meanwhile: `stop`
 * gives up the parked claims, and the close waits for the claims in flight
 * to be answered (their last jobs started) rather than cutting them short.
 */
import type { Job } from "@tay/core";
import type * as Engine from "../../engine/Engine.js";
import type { Slots } from "./slots.js";

type NextJobs = (
  lanes: ReadonlyArray<Engine.Lane>,
  options: { readonly limit: number; readonly signal: AbortSignal },
) => Promise<ReadonlyArray<Job.Job>>;

const resolved = Promise.resolve();

/**
 * Claims in flight at most. Two break the groups that would take turns at
 * the disk (a third group's room waits for the first answer, and joins the
 * next claim); more would only leave more claims parked on an idle queue,
 * each looked at by every drain that makes a job available.
 */
const claimsInFlightMax = 2;

/** One claim in flight. */
class Claim {
  constructor(
    readonly lanes: ReadonlyArray<Engine.Lane>,
    readonly limit: number,
    readonly controller: AbortController,
  ) {}
}

export class ClaimLoop {
  private stopped = false;
  private soonQueued = false;
  private readonly inFlight = new Set<Claim>();
  // Controllers of answered claims, never aborted: reused (one costs microseconds to make).
  private readonly spare: Array<AbortController> = [];
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
    slots.onRoom = (queue) => this.roomIn(queue);
    this.claim();
  }

  /** Claims no more: gives up the parked claims; `done` ends once no claim is in flight. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.inFlight.size === 0) this.ended();
    for (const claim of this.inFlight) claim.controller.abort();
  }

  /**
   * Room appeared in `queue`. With the claims in flight at their most, one
   * that does not take from `queue` is given up (answered with nothing when
   * parked, else answered as decided) and claimed again with every lane:
   * else two claims parked on idle queues would keep `queue`'s jobs waiting.
   */
  private roomIn(queue: string): void {
    if (this.inFlight.size >= claimsInFlightMax) {
      for (const claim of this.inFlight) {
        if (!claim.lanes.some((lane) => lane.queue === queue)) claim.controller.abort();
      }
    }
    this.soon();
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

  /** Issues a claim with the room no claim in flight was promised, if there is any. */
  private claim(): void {
    if (this.stopped || this.inFlight.size >= claimsInFlightMax) return;
    const lanes = this.slots.lanes();
    if (lanes.length === 0) return;
    const limit = this.slots.free();
    const claim = new Claim(lanes, limit, this.spare.pop() ?? new AbortController());
    this.inFlight.add(claim);
    this.slots.promise(lanes, limit);
    this.nextJobs(lanes, { limit, signal: claim.controller.signal }).then(
      (jobs) => this.answered(claim, jobs),
      // A claim the engine refuses (its log failed or closed) ends the claims: nothing more can start.
      () => {
        this.inFlight.delete(claim);
        this.slots.unpromise(claim.lanes, claim.limit);
        this.stopped = true;
        if (this.inFlight.size === 0) this.ended();
      },
    );
  }

  private answered(claim: Claim, jobs: ReadonlyArray<Job.Job>): void {
    this.inFlight.delete(claim);
    this.slots.unpromise(claim.lanes, claim.limit);
    if (!claim.controller.signal.aborted) this.spare.push(claim.controller);
    for (const job of jobs) this.start(job);
    if (!this.stopped) this.claim();
    else if (this.inFlight.size === 0) this.ended();
  }
}
