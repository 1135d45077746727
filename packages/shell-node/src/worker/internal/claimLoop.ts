/**
 * The worker's claims (`nextJobs`), with the lanes that have room, their
 * jobs started as each is answered. At most one claim is undecided at a
 * time (parked, or not yet in a drain); once the engine has decided it
 * (`onDecided`: its jobs are in a batch on its way to the disk), room that
 * frees up meanwhile is claimed at once by the next one, which joins the
 * batch of the ends that freed it instead of waiting one more write for
 * the answer (docs/worker.md, "Claims in flight"). Each claim's room is
 * promised to it until it is answered (`Slots.promise`), so claims in
 * flight never start more jobs than the slots hold.
 *
 * No fiber and no loop waiting for room: a claim is issued when room
 * appears (a handler settles, a slot is released), when a claim is
 * decided and when one is answered. Room that appears while a handler's
 * end is being recorded is claimed from a microtask queued before that
 * end's command, so that the claim joins the same batch (see slots.ts).
 * Once a claim is decided its jobs are started and run, even when the
 * worker closes meanwhile: `stop` gives up a parked claim, and the close
 * waits for the claims in flight to be answered (their last jobs started)
 * rather than cutting them short, then gives them its timeout like any
 * running job.
 */
import type { Job } from "@tay/core";
import type * as Engine from "../../engine/Engine.js";
import { isBackpressure } from "./backpressure.js";
import type { Slots } from "./slots.js";

type NextJobs = (
  lanes: ReadonlyArray<Engine.Lane>,
  options: {
    readonly limit: number;
    readonly signal: AbortSignal;
    readonly onDecided: () => void;
  },
) => Promise<ReadonlyArray<Job.Job>>;

const resolved = Promise.resolve();

/** A claim in flight: what it was promised. */
interface Claim {
  readonly lanes: ReadonlyArray<Engine.Lane>;
  readonly limit: number;
}

export class ClaimLoop {
  private stopped = false;
  // Paused (`pause`): no claim is issued until `resume`; told once none is in flight.
  private paused = false;
  // Stopped by a refusal of the engine (`halted` told), not by `stop`.
  private refused = false;
  private quiet: Array<() => void> = [];
  // The engine's backpressure refused a claim: none is issued until it may have room.
  private waitingForRoom = false;
  private soonQueued = false;
  // The claims' controller, kept until it is used to give claims up. Shared
  // by the claims in flight: giving up a decided claim changes nothing.
  private controller = new AbortController();
  // The claim not decided yet (undefined when none is), and how many are in flight in all.
  private undecided: Claim | undefined;
  private inFlight = 0;
  private ended: () => void = () => {};
  /** Ends once stopped (or a claim refused) with no claim in flight (never rejects). */
  readonly done: Promise<void>;

  constructor(
    private readonly slots: Slots,
    private readonly nextJobs: NextJobs,
    private readonly start: (job: Job.Job) => void,
    /** Told, once, the refusal that ended the claims (not when `stop` ended them). */
    private readonly halted: (reason: unknown) => void,
    /** Resolves once the engine may have room again, after its backpressure refused a claim. */
    private readonly roomWait: () => Promise<void>,
  ) {
    this.done = new Promise<void>((resolve) => {
      this.ended = resolve;
    });
    // A queue that had no room has some again: the claim still undecided
    // without it is given up (answered with nothing) and claimed again with
    // every lane. (A decided claim ignores it; one decided again after a
    // conflict and parked is given up the same way.)
    slots.onRoom = (queue) => {
      const undecided = this.undecided;
      if (undecided === undefined) this.soon();
      else if (!undecided.lanes.some(asks(queue))) this.controller.abort();
    };
    this.claim();
  }

  /** Claims no more: gives up a parked claim; `done` ends once no claim is in flight. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.inFlight === 0) this.ended();
    else this.controller.abort();
  }

  /**
   * Claims nothing until `resume`: a parked claim is given up (answered as
   * it stands), and one the engine decided starts its jobs as usual.
   * Resolves once no claim is in flight, so that no job starts after it
   * until `resume` (or at once when stopped: nothing starts then either).
   */
  pause(): Promise<void> {
    this.paused = true;
    if (this.inFlight === 0 || this.stopped) return resolved;
    this.controller.abort();
    return new Promise((resolve) => {
      this.quiet.push(resolve);
    });
  }

  /** Claims again after `pause`, at once with the lanes that have room. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.claim();
  }

  /** Whether a refusal of the engine ended the claims (`halted` was told). */
  get isHalted(): boolean {
    return this.refused;
  }

  /** Whether `pause` holds the claims back now. */
  get isPaused(): boolean {
    return this.paused;
  }

  /**
   * Claims from a microtask: called as a handler settles, before its end's
   * command is issued, the claim is issued after that command and after
   * those of the other handlers settling in the same turn, before the
   * engine decides them. Called as a claim is decided (inside a drain), it
   * issues the next one once the drain is over.
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

  /** Issues a claim with the lanes that have room, unless one is undecided or none has room. */
  private claim(): void {
    if (this.stopped || this.paused || this.waitingForRoom || this.undecided !== undefined) return;
    const lanes = this.slots.lanes();
    if (lanes.length === 0) return;
    if (this.controller.signal.aborted) this.controller = new AbortController();
    const claim: Claim = { lanes, limit: this.slots.free() };
    this.undecided = claim;
    this.inFlight += 1;
    this.slots.promise(lanes, claim.limit, 1);
    this.nextJobs(lanes, {
      limit: claim.limit,
      signal: this.controller.signal,
      onDecided: () => this.decided(claim),
    }).then(
      (jobs) => this.answered(claim, jobs),
      // A claim the engine refuses (its log failed or closed) ends the claims: nothing more can start.
      // `done` waits for the other claims in flight all the same (a log that
      // failed refuses them too; one answered first starts its jobs).
      (reason: unknown) => {
        this.settled(claim);
        if (isBackpressure(reason) && !this.stopped) {
          this.backOff();
          return;
        }
        const first = !this.stopped;
        this.stopped = true;
        if (first) this.refused = true;
        if (this.inFlight === 0) this.ended();
        if (first) this.halted(reason);
      },
    );
  }

  // The engine is full for now and did nothing: claim again once it may have room. A claim
  // still in flight is answered as usual meanwhile.
  private backOff(): void {
    if (this.waitingForRoom) return;
    this.waitingForRoom = true;
    void this.roomWait().then(() => {
      this.waitingForRoom = false;
      // Stopped meanwhile: `stop` (or the last claim's answer) ended the claims.
      this.claim();
    });
  }

  private decided(claim: Claim): void {
    if (this.undecided !== claim) return;
    this.undecided = undefined;
    this.soon();
  }

  private settled(claim: Claim): void {
    if (this.undecided === claim) this.undecided = undefined;
    this.inFlight -= 1;
    this.slots.promise(claim.lanes, claim.limit, -1);
    if (this.inFlight === 0 && this.quiet.length > 0) {
      for (const told of this.quiet.splice(0)) told();
    }
  }

  private answered(claim: Claim, jobs: ReadonlyArray<Job.Job>): void {
    this.settled(claim);
    for (const job of jobs) this.start(job);
    if (this.stopped) {
      if (this.inFlight === 0) this.ended();
      return;
    }
    const undecided = this.undecided;
    if (undecided === undefined) this.claim();
    else if (this.missedBy(undecided)) this.controller.abort();
  }

  /**
   * True when a queue has room that `undecided` does not ask for: the room
   * a claim was promised and did not take is free again when it is
   * answered, and the claim issued meanwhile could not be offered it. Such
   * a queue would wait for that claim's answer (a parked claim may wait
   * forever), so the claim is given up and claimed again with every lane,
   * as for room told by `onRoom`. Its own promise counts as free here: it
   * may hold the only room in all that the queue needs.
   */
  private missedBy(undecided: Claim): boolean {
    this.slots.promise(undecided.lanes, undecided.limit, -1);
    const lanes = this.slots.lanes();
    this.slots.promise(undecided.lanes, undecided.limit, 1);
    return lanes.some((lane) => !undecided.lanes.some(asks(lane.queue)));
  }
}

const asks =
  (queue: string) =>
  (lane: Engine.Lane): boolean =>
    lane.queue === queue;
