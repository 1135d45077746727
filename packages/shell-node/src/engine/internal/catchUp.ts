/**
 * Several engines, one log: what an engine does when another writer
 * appended. An append whose expected last sequence is no longer the log's
 * is refused with `AppendConflict` (at once, or through its ticket), and
 * nothing of it is written. The engine then catches up: it reads the
 * records it has not seen (from its committed last sequence to the log's),
 * folds them into its committed state, makes that both states, and decides
 * the refused commands again, in their order, with the same pure deciders.
 * Their callers wait meanwhile; commands issued during the catch-up wait
 * behind them. Each command is decided again at most `conflictRetriesMax`
 * times; past that its caller gets `ContentionExhausted`.
 *
 * An engine in an even race that keeps losing steps aside
 * (`conflictBackoffMs`, 20 ms by default): the first conflict after an
 * append of its own that went through is caught up at once; each further
 * conflict in a row first waits `conflictBackoffMs`, twice as long each
 * time, up to 8 times it (docs/postgres.md, "An engine that keeps losing
 * steps aside"). Its commands, and those issued meanwhile, wait for it and
 * are then decided together: one append where several writers' races were.
 * An engine whose own records are few or most of those it saw lately is in
 * no even race and never waits.
 *
 * No job is started twice: a claim is decided against a state holding every
 * record up to the sequence its append expects, and the log appends only
 * after exactly that sequence (docs/postgres.md, "Several engines").
 *
 * The same catch-up serves a notice that the log moved (`follow`): with no
 * command refused, it reads what others appended and decides the parked
 * waiting claims again, so a job inserted through another engine wakes a
 * claim parked in this one.
 */
import type { HistoryError, State } from "@tay/core";
import { Evolve, Generation } from "@tay/core";
import * as Cause from "effect/Cause";
import * as Data from "effect/Data";
import * as Deferred from "effect/Deferred";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Option from "effect/Option";
import * as Described from "../../disk/Described.js";
import type * as Log from "../../log/Log.js";
import type { Entry } from "../../log/Projection.js";
import type { Pending } from "./engineRequest.js";

/**
 * Another writer's records that the fold refuses: the log holds a history
 * this engine cannot follow, and nothing may be decided on it.
 */
const refusedByFold = (error: HistoryError.HistoryError): Error =>
  new Error(`another writer's record refused by the fold: ${error.reason._tag}`);

/**
 * A log moved onto another writer's generation without saying how many
 * records its canonical base holds: the engine cannot tell the base's
 * restated jobs from the events after it, so it stops rather than guess.
 */
const baseLengthUntold = (epoch: number): Error =>
  new Error(
    `the log moved onto epoch ${epoch} without telling its base's length (Log.View.generation's baseRecordCount)`,
  );

/** How many times one command is decided again after conflicts before its caller is told. */
export const conflictRetriesMaxDefault = 64;

/**
 * The first wait before a catch-up after a conflict in a row (ms); 0 catches
 * up at once. Paid only by an engine in an even race (`minorityShare`):
 * docs/postgres.md, "An engine that keeps losing steps aside".
 */
export const conflictBackoffMsDefault = 20;

/** The longest wait, as a multiple of the first: 20 ms doubles to 160. */
const backoffDoublings = 3;

/**
 * How long to wait before the catch-up that follows the `lost`-th conflict
 * in a row: none for the first (one race lost is ordinary), then `backoffMs`
 * doubling.
 */
const backoffAfter = (lost: number, backoffMs: number): number =>
  lost < 2 || backoffMs === 0 ? 0 : backoffMs * 2 ** Math.min(lost - 2, backoffDoublings);

/**
 * An engine steps aside only in an even race: when its own records are at
 * least 1/`minorityShare` and at most `dominantShare` of the records it
 * lately appended or folded. A minority writer (a web process inserting now
 * and then beside busy workers) loses most races, and waiting would only
 * give it more to catch up on before its next try; a dominant one loses to
 * writers too small to use the time it would leave them (docs/postgres.md,
 * "Only an engine in an even race steps aside", 2026-12-08).
 */
const minorityShare = 8;
const dominantShare = 2 / 3;

/** Below this many records seen lately (or none of its own), an engine is in no race yet: it never steps aside. */
const shareRecordsMin = 64;

/** Past this many records, the counts of own and others' records are halved: "lately". */
const shareWindowRecords = 4096;

/** Entries read per page while catching up. */
const pageRecords = 4096;

/**
 * Other writers kept appending: the command was decided `attempts` times
 * and met `AppendConflict` every time. Nothing of it
 * was appended; issue it again (or add fewer engines).
 */
export class ContentionExhausted extends Data.TaggedError("ContentionExhausted")<{
  /** The log. */
  readonly path: string;
  readonly attempts: number;
  /** The log's last sequence when the command gave up. */
  readonly lastSequence: number;
}> {
  get description(): Described.Description {
    return Described.describe(
      "ContentionExhausted",
      this.path,
      `other writers appended before each of ${this.attempts} attempts (log at sequence ${this.lastSequence}); nothing of this command was appended`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** How the catch-up reads and changes the batch decider it serves. */
export interface Host<X> {
  /** The committed state and its last sequence: where the catch-up reads from. */
  readonly committed: () => { readonly state: State.State; readonly lastSequence: number };
  /** Makes `state` (at `lastSequence`) both states; `entries` are the records read to reach it. */
  readonly caughtUp: (
    state: State.State,
    lastSequence: number,
    entries: ReadonlyArray<Entry>,
  ) => void;
  /**
   * Makes `state` (the fold of another writer's new generation, at
   * `lastSequence`) both states; `entries` are the records after its base.
   */
  readonly reloaded: (
    state: State.State,
    lastSequence: number,
    generation: Reloaded,
    entries: ReadonlyArray<Entry>,
  ) => void;
  /** Every parked waiting claim, unparked, oldest first. */
  readonly takeParked: () => Array<Pending<X>>;
  /** A command now waits for the catch-up (its caller may give up meanwhile). */
  readonly waits: (request: Pending<X>) => void;
  /** Decides `requests` in order as one drain (they are answered by it). */
  readonly decide: (requests: ReadonlyArray<Pending<X>>) => void;
}

/** Another writer's generation the engine moved onto: where it starts, where its events start. */
export interface Reloaded {
  readonly firstSequence: number;
  /** The first sequence after its canonical base. */
  readonly firstEvent: number;
}

/** The catch-up's counters: how often appends conflicted and commands were decided again. */
export interface CatchUpStats {
  /** Whether other engines may append to this log (it learns their head); false for a directory's store. */
  readonly shared: boolean;
  /** Batches refused with `AppendConflict`. */
  readonly conflicts: number;
  /** Catch-ups run (reads of what others appended). */
  readonly catchUps: number;
  /** Commands decided again. */
  readonly retried: number;
  /** Commands answered with `ContentionExhausted`. */
  readonly exhausted: number;
  /** Records of other writers folded. */
  readonly recordsFolded: number;
  /** Generations of other writers' compactions folded again (the log moved onto them). */
  readonly reloads: number;
  /** Catch-ups that first waited, the engine having lost the race again (`conflictBackoffMs`). */
  readonly stepsAside: number;
  /** Milliseconds those waits lasted, in all. */
  readonly steppedAsideMs: number;
}

/** The refused commands of one log and the catch-up that decides them again. */
export class CatchUp<K extends Log.Kind, X> {
  private running = false;
  // Another catch-up was asked for while one ran, or while suspended (a notice
  // that the log moved again): it starts when the one running ends or on resume.
  private again = false;
  // Suspensions under way (this engine's compaction): no catch-up starts meanwhile.
  private suspended = 0;
  // Told when the running catch-up has ended.
  private ended: Array<() => void> = [];
  private waiting: Array<Pending<X>> = [];
  private readonly attempts = new WeakMap<Pending<X>, number>();
  // Races lost (catch-ups after a conflict) since this engine's last append
  // that went through, and the wait the next catch-up starts with (`backoffAfter`).
  private lostInARow = 0;
  private pauseMs = 0;
  // Records this engine appended, and records of others it folded, lately
  // (both halved once their sum passes `shareWindowRecords`).
  private ownRecords = 0;
  private othersRecords = 0;
  // What the log was last told (`Log.minorityWriter`).
  private minority = false;
  private counters = {
    conflicts: 0,
    catchUps: 0,
    retried: 0,
    exhausted: 0,
    recordsFolded: 0,
    reloads: 0,
    stepsAside: 0,
    steppedAsideMs: 0,
  };

  constructor(
    private readonly log: Log.Log<K>,
    private readonly host: Host<X>,
    private readonly retriesMax: number,
    // The engine's failure type holds both; the caller passes the identity.
    private readonly refusal: (error: K["error"] | ContentionExhausted) => X,
    private readonly backoffMs: number,
  ) {}

  /** Whether commands must wait: a catch-up is under way. */
  get active(): boolean {
    return this.running;
  }

  /** The counters so far. */
  stats(): CatchUpStats {
    return { shared: this.log.refresh !== undefined, ...this.counters };
  }

  /**
   * A batch was refused with `AppendConflict`: its accepted commands are
   * decided again after the catch-up (those past their retries are told).
   * `held`: the log holds the head for this engine's next append (the
   * conflict's `held`), so the catch-up starts at once.
   */
  conflicted(requests: ReadonlyArray<Pending<X>>, held = false): void {
    this.counters.conflicts += 1;
    for (const request of requests) {
      const attempts = (this.attempts.get(request) ?? 0) + 1;
      if (attempts > this.retriesMax) {
        this.counters.exhausted += 1;
        request.refuse(
          this.refusal(
            new ContentionExhausted({
              path: this.log.view.path,
              attempts,
              lastSequence: this.log.lastSequence(),
            }),
          ),
        );
        continue;
      }
      this.attempts.set(request, attempts);
      this.counters.retried += 1;
      this.waiting.push(request);
      this.host.waits(request);
    }
    // One loss per catch-up: the batches a refused transaction failed
    // together, and those settling while a catch-up runs (it first waits for
    // the engine's appends in flight, then reads past what beat them), count
    // as the race that catch-up answers.
    if (!this.running) {
      this.lostInARow += 1;
      this.pauseMs =
        held || !this.racesEvenly() ? 0 : backoffAfter(this.lostInARow, this.backoffMs);
    }
    this.start();
  }

  /** An append of this engine (`records` long) went through: the next conflict is caught up at once. */
  appended(records: number): void {
    this.lostInARow = 0;
    this.pauseMs = 0;
    this.ownRecords += records;
    this.keepLately();
  }

  /** Whether this engine's own records are an even share of those it saw lately (see `minorityShare`). */
  private racesEvenly(): boolean {
    return this.share() === "even";
  }

  /** Where this engine's own records stand among those it saw lately (see `minorityShare`). */
  private share(): "unknown" | "minority" | "even" | "dominant" {
    const seen = this.ownRecords + this.othersRecords;
    // An engine that has appended nothing has no share yet (four engines
    // starting together: the first to lose would be "a minority" of one race).
    if (seen < shareRecordsMin || this.ownRecords === 0) return "unknown";
    if (this.ownRecords * minorityShare < seen) return "minority";
    return this.ownRecords > seen * dominantShare ? "dominant" : "even";
  }

  /** Halves both counts once they pass the window, and tells the log when the writer's share crossed the minority line. */
  private keepLately(): void {
    if (this.ownRecords + this.othersRecords > shareWindowRecords) {
      this.ownRecords /= 2;
      this.othersRecords /= 2;
    }
    const minority = this.share() === "minority";
    if (minority !== this.minority) {
      this.minority = minority;
      this.log.minorityWriter?.(minority);
    }
  }

  /** Commands issued while a catch-up runs: decided after it, behind the refused ones. */
  hold(requests: ReadonlyArray<Pending<X>>): void {
    for (const request of requests) {
      this.waiting.push(request);
      this.host.waits(request);
    }
  }

  /** Drops a held command whose caller gave up; false when it is not held. */
  drop(request: Pending<X>): boolean {
    const position = this.waiting.indexOf(request);
    if (position < 0) return false;
    this.waiting.splice(position, 1);
    return true;
  }

  /** The log moved (another writer appended): read it, and decide the parked claims again. */
  follow(): void {
    if (this.running) this.again = true;
    else this.start();
  }

  /**
   * Keeps catch-ups from starting, then waits for the one running to end:
   * a compaction writes the engine's state as the base and makes the folded
   * base both states, which a catch-up replacing the states meanwhile (or
   * having learned the head without folding its records) would undo or
   * leave a hole in. `resume` ends it; a catch-up asked for meanwhile runs then.
   */
  suspend(): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      this.suspended += 1;
      while (this.running) {
        const ended = yield* Deferred.make<void>();
        this.ended.push(() => Deferred.unsafeDone(ended, Effect.void));
        yield* Deferred.await(ended);
      }
    });
  }

  /** Ends a `suspend`; starts the catch-up asked for meanwhile. */
  resume(): void {
    this.suspended -= 1;
    if (this.suspended === 0 && this.again) this.start();
  }

  private start(): void {
    if (this.running) return;
    if (this.suspended > 0) {
      this.again = true;
      return;
    }
    this.running = true;
    this.again = false;
    this.counters.catchUps += 1;
    const pause = this.pauseMs;
    this.pauseMs = 0;
    if (pause > 0) {
      this.counters.stepsAside += 1;
      this.counters.steppedAsideMs += pause;
    }
    const caughtUp =
      pause === 0
        ? this.read()
        : Effect.zipRight(Effect.sleep(Duration.millis(pause)), this.read());
    Effect.runFork(
      Effect.matchCause(caughtUp, {
        onSuccess: () => this.finish(undefined),
        onFailure: (cause) => this.finish(cause),
      }),
    );
  }

  /**
   * Waits until this engine's own appends have settled (the log's `refresh`,
   * which also learns the head other writers moved), then reads and folds
   * everything from the committed last sequence to the log's, and hands it
   * over. Commands wait meanwhile, so nothing new is appended.
   */
  private read(): Effect.Effect<void, K["error"]> {
    return Effect.gen(this, function* () {
      yield* this.opened();
      const before = yield* this.log.view.generation();
      if (this.log.refresh !== undefined) yield* this.log.refresh();
      const after = yield* this.log.view.generation();
      // Another writer compacted and the log moved onto its generation.
      if (after.epoch !== before.epoch) return yield* this.reload(after);
      const from = this.host.committed();
      let state = from.state;
      const entries: Array<Entry> = [];
      const fold = Evolve.batch(state);
      const last = yield* this.pages(from.lastSequence, (page) => {
        const next = fold.evolveAll(page.map((entry) => entry.event));
        if (next._tag === "Left") return next.left;
        state = next.right;
        for (const entry of page) entries.push(entry);
        return undefined;
      });
      this.counters.recordsFolded += entries.length;
      this.othersRecords += entries.length;
      this.keepLately();
      this.host.caughtUp(state, last, entries);
    });
  }

  /**
   * Folds another writer's generation from its first record (its base
   * restates every job this engine knew, so nothing of the old state is
   * kept) and hands it over with the records after the base.
   */
  private reload(generation: {
    readonly epoch: number;
    readonly firstSequence: number;
    readonly baseRecordCount?: number;
  }): Effect.Effect<void, K["error"]> {
    return Effect.gen(this, function* () {
      const { epoch, firstSequence, baseRecordCount } = generation;
      if (baseRecordCount === undefined) return yield* Effect.die(baseLengthUntold(epoch));
      const firstEvent = firstSequence + baseRecordCount;
      const builder = Generation.start(baseRecordCount, { lean: this.host.committed().state.lean });
      const entries: Array<Entry> = [];
      const last = yield* this.pages(firstSequence - 1, (page) => {
        for (const entry of page) {
          const applied = Generation.apply(builder, entry.sequence, entry.event);
          if (applied._tag === "Left") return applied.left;
          if (entry.sequence >= firstEvent) entries.push(entry);
        }
        return undefined;
      });
      const state = Generation.finish(builder);
      if (state._tag === "Left") return yield* Effect.die(refusedByFold(state.left));
      this.counters.reloads += 1;
      this.counters.recordsFolded += last - firstSequence + 1;
      this.host.reloaded(state.right, last, { firstSequence, firstEvent }, entries);
    });
  }

  /**
   * Reads the log page by page from after `from` to its last sequence and
   * hands each page to `fold` (which answers the fold's refusal, if any);
   * answers the last sequence read. A refused page ends the engine.
   */
  private pages(
    from: number,
    fold: (page: ReadonlyArray<Entry>) => HistoryError.HistoryError | undefined,
  ): Effect.Effect<number, K["error"]> {
    return Effect.gen(this, function* () {
      let last = from;
      while (last < this.log.lastSequence()) {
        const page = yield* this.log.view.readFrom(last + 1, pageRecords);
        if (page.length === 0) break;
        const refused = fold(page);
        if (refused !== undefined) return yield* Effect.die(refusedByFold(refused));
        last = page[page.length - 1]?.sequence ?? last;
      }
      return last;
    });
  }

  /** Waits while the log holds appends (its own compaction); fails when it takes none. */
  private opened(): Effect.Effect<void, K["error"]> {
    return Effect.gen(this, function* () {
      for (;;) {
        const admitted = this.log.admission();
        if (admitted._tag === "Open") return;
        if (admitted._tag === "Refused") return yield* Effect.fail(admitted.error);
        yield* Deferred.await(admitted.gate);
      }
    });
  }

  // Decides the held commands (and the parked claims, which the records read
  // may have fed) again; a failed read answers them all with its failure.
  private finish(cause: Cause.Cause<K["error"]> | undefined): void {
    this.running = false;
    const requests = [...this.host.takeParked(), ...this.waiting];
    this.waiting = [];
    if (cause !== undefined) {
      const failure = Cause.failureOption(cause);
      for (const request of requests) {
        if (Option.isSome(failure)) request.refuse(this.refusal(failure.value));
        else request.die(Cause.squash(cause));
      }
    } else if (requests.length > 0 || this.log.incoming !== undefined) {
      // A log with incoming jobs: they were not taken while this ran.
      try {
        this.host.decide(requests);
      } catch (defect) {
        for (const request of requests) request.die(defect);
      }
    }
    this.log.caughtUp?.();
    const ended = this.ended;
    this.ended = [];
    for (const tell of ended) tell();
    if (this.again) this.start();
  }
}
