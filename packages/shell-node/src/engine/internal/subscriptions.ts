/**
 * Subscriptions to committed events: every domain event the log holds as
 * durable, with its record's sequence, in log order, from now or from a
 * sequence. Each subscriber has a bounded buffer. While it keeps up, the
 * engine hands it each committed batch as it commits; once it falls more
 * than `bufferMax` events behind, its buffer is dropped and it reads what
 * it missed from the log, then joins the live batches again. Memory stays
 * bounded whatever a subscriber does; only a subscriber so far behind that
 * compaction removed what it has not read fails, with `Compacted`.
 *
 * A compaction's base records are not events (they restate the state), so
 * subscribers skip them.
 */
import { Event } from "@tay/core";
import * as Chunk from "effect/Chunk";
import * as Effect from "effect/Effect";
import * as Option from "effect/Option";
import * as Stream from "effect/Stream";
import type * as Log from "../../log/Log.js";

/** One committed domain event and the sequence of the record that holds it. */
export interface Committed {
  readonly sequence: number;
  /** Its position inside its record: 0, or the member's index in a mutation. */
  readonly member: number;
  readonly event: Event.DomainEvent;
}

/** What the subscribers hold and how far behind they are. */
export interface SubscriberStats {
  readonly subscribers: number;
  /** Committed records the furthest-behind subscriber has not taken yet. */
  readonly behind: number;
  /** Events handed over and not taken, all subscribers together. */
  readonly buffered: number;
}

/** Records read at a time while a subscriber catches up. */
export const catchUpPageRecords = 1024;

/** The domain events of a record (a mutation's members, a base record none). */
const eventsOf = (sequence: number, event: Event.Event, into: Array<Committed>): void => {
  if (Event.isSnapshotPart(event)) return;
  if (event._tag === "Mutation") {
    event.events.forEach((member, index) => {
      into.push({ sequence, member: index, event: member });
    });
  } else {
    into.push({ sequence, member: 0, event });
  }
};

/** One subscriber's place in the log and what it has not taken yet. */
export class Subscriber<E> {
  /** Events handed over but not taken, oldest first. */
  buffer: Array<Committed> = [];
  /** The first sequence not yet handed over (taken or buffered). */
  next: number;
  /** Whether committed batches are handed over as they commit (else it reads the log). */
  live = false;
  closed = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly hub: Subscriptions<E>,
    from: number,
  ) {
    this.next = from;
  }

  /**
   * The next events, at least one, in log order: from the buffer, from the
   * log while catching up, or, when it has caught up, once a batch commits.
   * Empty only once the subscriber (or the engine) closed.
   */
  take(): Effect.Effect<ReadonlyArray<Committed>, E> {
    return Effect.suspend(() => {
      if (this.buffer.length > 0) {
        const taken = this.buffer;
        this.buffer = [];
        return Effect.succeed(taken);
      }
      if (this.closed) return Effect.succeed([]);
      if (!this.live) return Effect.flatMap(this.hub.catchUp(this), (read) => this.after(read));
      return Effect.zipRight(
        Effect.async<void>((resume) => {
          this.wake = () => resume(Effect.void);
          return Effect.sync(() => {
            this.wake = undefined;
          });
        }),
        this.take(),
      );
    });
  }

  private after(read: ReadonlyArray<Committed>): Effect.Effect<ReadonlyArray<Committed>, E> {
    return read.length > 0 ? Effect.succeed(read) : this.take();
  }

  /**
   * Hands over a committed batch of records `first..last` (while live), or
   * falls back to the log when that would pass `bufferMax`.
   */
  offer(events: ReadonlyArray<Committed>, first: number, last: number, bufferMax: number): void {
    if (!this.live || this.closed) return;
    if (first !== this.next || this.buffer.length + events.length > bufferMax) {
      // Behind (or a gap): drop the buffer, read from the first sequence not taken.
      const oldest = this.buffer[0];
      if (oldest !== undefined) this.next = oldest.sequence;
      this.buffer = [];
      this.live = false;
    } else {
      for (const event of events) this.buffer.push(event);
      this.next = last + 1;
    }
    this.notify();
  }

  /** Makes the next `take` return (what it has, or nothing once closed). */
  notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Ends the subscription: the next `take` answers nothing. */
  close(): void {
    this.closed = true;
    this.hub.remove(this);
    this.notify();
  }
}

/** Every subscriber of one engine. */
export class Subscriptions<E> {
  private readonly subscribers = new Set<Subscriber<E>>();

  constructor(
    private readonly view: Log.View<E>,
    /** The last committed sequence (what a subscriber may read up to). */
    private readonly committedLast: () => number,
    /**
     * The current generation's first sequence, and the first after its
     * base: records in between restate the state and are no events.
     */
    private readonly generation: () => { readonly first: number; readonly firstEvent: number },
    private readonly bufferMax: number,
  ) {}

  /** A subscriber from `from` (default: the next commit). */
  subscribe(from?: number): Subscriber<E> {
    const next = this.committedLast() + 1;
    const subscriber = new Subscriber<E>(this, from ?? next);
    // From now: live at once, no read of the log.
    subscriber.live = subscriber.next === next;
    this.subscribers.add(subscriber);
    return subscriber;
  }

  remove(subscriber: Subscriber<E>): void {
    this.subscribers.delete(subscriber);
  }

  /** The subscribers, how far the furthest is behind, and what they hold untaken. */
  stats(): SubscriberStats {
    let behind = 0;
    let buffered = 0;
    const last = this.committedLast();
    for (const subscriber of this.subscribers) {
      const first = subscriber.buffer[0]?.sequence ?? subscriber.next;
      behind = Math.max(behind, last + 1 - first);
      buffered += subscriber.buffer.length;
    }
    return { subscribers: this.subscribers.size, behind, buffered };
  }

  /** A batch committed: its records, in sequence order. */
  publish(
    records: ReadonlyArray<{ readonly sequence: number; readonly event: Event.Event }>,
  ): void {
    const first = records[0];
    const last = records[records.length - 1];
    if (first === undefined || last === undefined || this.subscribers.size === 0) return;
    const events: Array<Committed> = [];
    for (const record of records) eventsOf(record.sequence, record.event, events);
    for (const subscriber of this.subscribers) {
      subscriber.offer(events, first.sequence, last.sequence, this.bufferMax);
    }
  }

  /** A compaction wrote a new base: live subscribers skip it (its records are no events). */
  skipTo(next: number): void {
    for (const subscriber of this.subscribers) {
      if (subscriber.live) subscriber.next = next;
    }
  }

  /**
   * The engine moved onto another writer's generation: every live
   * subscriber reads from the log again, so one that had not seen
   * everything before it fails with `Compacted`, and one that had skips
   * the base (`catchUp`).
   */
  reread(): void {
    for (const subscriber of this.subscribers) {
      if (subscriber.live) {
        subscriber.live = false;
        subscriber.notify();
      }
    }
  }

  /** Ends every subscription (the engine closes). */
  closeAll(): void {
    for (const subscriber of [...this.subscribers]) subscriber.close();
  }

  /**
   * Reads the next page of what `subscriber` missed, up to the last
   * committed sequence; once it has read everything, it goes live (in the
   * same step, so no batch committed after the read is missed).
   */
  catchUp(subscriber: Subscriber<E>): Effect.Effect<ReadonlyArray<Committed>, E> {
    return Effect.gen(this, function* () {
      // Inside the base: skip it. Before the generation: the log says `Compacted`.
      const { first, firstEvent } = this.generation();
      if (subscriber.next >= first && subscriber.next < firstEvent) subscriber.next = firstEvent;
      const last = this.committedLast();
      const limit = Math.min(catchUpPageRecords, last - subscriber.next + 1);
      const read = limit > 0 ? yield* this.view.readFrom(subscriber.next, limit) : [];
      const events: Array<Committed> = [];
      for (const entry of read) {
        if (entry.sequence > this.committedLast()) break;
        eventsOf(entry.sequence, entry.event, events);
        subscriber.next = entry.sequence + 1;
      }
      if (subscriber.next > this.committedLast()) subscriber.live = true;
      return events;
    });
  }
}

/** Where a subscription starts. */
export interface SubscribeOptions {
  /**
   * The first sequence to deliver events from (default: the next commit).
   * Inside the generation's canonical base, it starts after the base (base
   * records restate the state, they are no events); before the generation
   * (compacted away, now or while it catches up), the subscription fails
   * with `Compacted`.
   */
  readonly from?: number;
}

/** A subscription for callers outside Effect: an async iterator that can be closed. */
export interface Subscription extends AsyncIterableIterator<Committed> {
  /** Ends it: a pending `next` resolves done. Idempotent. */
  readonly close: () => void;
}

/** The subscription as an Effect stream; ending the stream's scope ends it. */
export const stream = <E>(
  hub: Subscriptions<E>,
  options: SubscribeOptions = {},
): Stream.Stream<Committed, E> =>
  Stream.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => hub.subscribe(options.from)),
        (subscriber) => Effect.sync(() => subscriber.close()),
      ),
      (subscriber) =>
        Stream.repeatEffectChunkOption(
          Effect.flatMap(Effect.mapError(subscriber.take(), Option.some), (events) =>
            events.length === 0
              ? Effect.fail(Option.none())
              : Effect.succeed(Chunk.unsafeFromArray([...events])),
          ),
        ),
    ),
  );

/** The subscription as an async iterator; `run` runs an Effect as a promise (on the engine's clock). */
export const iterator = <E>(
  hub: Subscriptions<E>,
  options: SubscribeOptions,
  run: <A>(effect: Effect.Effect<A, E>) => Promise<A>,
): Subscription => {
  const subscriber = hub.subscribe(options.from);
  let taken: ReadonlyArray<Committed> = [];
  let position = 0;
  const done = (): IteratorReturnResult<undefined> => ({ done: true, value: undefined });
  const subscription: Subscription = {
    [Symbol.asyncIterator]: () => subscription,
    next: async () => {
      if (position >= taken.length) {
        taken = await run(subscriber.take());
        position = 0;
      }
      const event = taken[position];
      if (event === undefined) return done();
      position += 1;
      return { done: false, value: event };
    },
    return: async () => {
      subscriber.close();
      return done();
    },
    close: () => subscriber.close(),
  };
  return subscription;
};
