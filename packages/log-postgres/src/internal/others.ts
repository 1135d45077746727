/**
 * Other writers of the same store (several engines, one store): learning
 * how far they appended, and hearing when they did. `refresh` waits until this log's own appends have
 * settled, reads the head row on the reader's session, and, when the head
 * is further on in the same generation, takes it as the log's last
 * sequence: the records between are the others', committed, and the view
 * reads them from the table. A head in another epoch (another writer
 * compacted) moves the log onto that generation: its first sequence, base
 * record count and head (`view.generation()` tells the change; the engine
 * folds the new generation again, docs/postgres.md).
 *
 * The follower hears the others: a session that LISTENs on the store's
 * channel (each writer notifies it after a commit, `WRITER:LAST`) and polls
 * the head row, every `pollIntervalMs` where LISTEN is refused
 * (CockroachDB) and ten times slower as a safety net where it works (a
 * writer that died between its COMMIT and its notification).
 *
 * What it hears is told to the engine at most once per `followIntervalMs`
 * (the first at once, the rest of the interval in one tell at its end):
 * each tell costs the engine a catch-up (the head and the new records
 * read, folded), and an idle engine beside a busy one otherwise spent as
 * much CPU catching up on every commit as the writer spent committing.
 *
 * What it tells is throttled the same way: this log notifies at most once
 * per `followIntervalMs` (the first commit after a quiet spell at once,
 * inline; the commits after it within the interval in one notification
 * at its end, or inline in the first append after it). Every notification
 * reaches every listening session of the store, this log's own follower
 * included, which had to wake, read and discard its own notification for
 * every append (and the server had to queue and deliver it); the others
 * tell their engines at most once per interval anyway.
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import * as Deferred from "effect/Deferred";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Fiber from "effect/Fiber";
import type { Session } from "../Driver.js";
import type { PgLogError } from "../PgError.js";
import { onReaderOrDatabaseError, type ReaderSession } from "./reader.js";
import { close, connect, run } from "./session.js";
import { channel, notifications } from "./sql.js";
import * as Tables from "./tables.js";
import * as OthersBytes from "./othersBytes.js";
import { type LogState, whenIdle } from "./state.js";
import { isFailure, readHead } from "./writer.js";

/**
 * Another writer's generation, now current: its row, read on the reader's
 * session (a row missing or malformed is the log's typed refusal).
 */
const generationOf = (state: LogState, reader: ReaderSession, epoch: number) =>
  Effect.gen(function* () {
    const found = yield* onReaderOrDatabaseError(state, reader, "refresh", (session) =>
      run(session, state.sql.generation, [state.storeId, epoch]),
    );
    const generation = Tables.generation(state.path, epoch, found.rows);
    return "firstSequence" in generation ? generation : yield* Effect.fail(generation);
  });

/** Moves the log's last sequence up to the head others reached (see the module's comment). */
export const refresh = (state: LogState, reader: ReaderSession): Effect.Effect<void, PgLogError> =>
  Effect.gen(function* () {
    yield* whenIdle(state);
    const taken = yield* OthersBytes.take(state, reader);
    const read = yield* OthersBytes.headNow(state, reader, taken);
    const { head } = read;
    const idle = state.pending.length === 0 && state.inFlight.length === 0;
    if (!idle || (head.epoch !== state.epoch && state.gate !== undefined)) {
      OthersBytes.putBack(state, taken);
      return;
    }
    if (head.epoch !== state.epoch) {
      // Another writer compacted: this log follows onto its generation.
      const generation = yield* generationOf(state, reader, head.epoch);
      state.epoch = head.epoch;
      state.firstSequence = generation.firstSequence;
      state.baseRecordCount = generation.baseRecordCount;
      state.committedLast = head.lastSequence;
      state.assignedLast = head.lastSequence;
      state.committedBytes = 0;
      state.uncounted = [{ first: generation.firstSequence, last: head.lastSequence }];
      yield* OthersBytes.count(state, reader);
      return;
    }
    OthersBytes.settle(state, taken, read);
  });

/** What follows the other writers: one session that listens (or polls) and the listeners it tells. */
export interface Follower {
  readonly listeners: Set<() => void>;
  session: Session | undefined;
  /** LISTEN worked on the session: polls are only the safety net. */
  listening: boolean;
  fiber: Fiber.RuntimeFiber<void> | undefined;
  /** This log's mark in its notifications, so that it ignores its own. */
  readonly writerId: string;
  /** Whether this log tells the others (off once the database refused `pg_notify`). */
  notifying: boolean;
  sending: boolean;
  /** The last sequence to tell the others next, if any. */
  latest: number | undefined;
  /** Stopped: a session still connecting is closed as soon as it connects. */
  stopped: boolean;
  /** Ends the loop's current sleep (its session was lost: reconnect and listen again now). */
  woken: Deferred.Deferred<void> | undefined;
  /** Sends the latest notification still owed (`notifyCommitted`), once a session is there. */
  resend: () => void;
  /** When the listeners were last told (`performance.now()`), for `followIntervalMs`. */
  toldAt: number;
  /** The tell owed at the end of the current interval, if one is owed. */
  trailing: ReturnType<typeof setTimeout> | undefined;
  /** When this log last notified the others (`performance.now()`), for `followIntervalMs`. */
  noticedAt: number;
  /** The notification owed at the end of the current interval, if one is owed. */
  owing: ReturnType<typeof setTimeout> | undefined;
}

/** A follower of `state`'s store, not started. */
export const follower = (state: LogState): Follower => ({
  listeners: new Set(),
  session: undefined,
  listening: false,
  fiber: undefined,
  writerId: randomUUID().slice(0, 8),
  notifying: state.options.notifications,
  sending: false,
  latest: undefined,
  stopped: false,
  woken: undefined,
  resend: () => {},
  toldAt: Number.NEGATIVE_INFINITY,
  trailing: undefined,
  noticedAt: Number.NEGATIVE_INFINITY,
  owing: undefined,
});

/**
 * Forgets the follower's session once its connection is lost (told by the
 * driver, or met by a statement) and wakes the loop, which reconnects,
 * LISTENs again and polls the head at once: what was notified meanwhile is
 * what that poll finds.
 */
const lost = (follow: Follower, session: Session): void => {
  if (follow.session !== session) return;
  follow.session = undefined;
  follow.listening = false;
  void session.close();
  const woken = follow.woken;
  if (woken !== undefined) Deferred.unsafeDone(woken, Effect.void);
};

const tellNow = (follow: Follower): void => {
  follow.toldAt = performance.now();
  for (const listener of [...follow.listeners]) listener();
};

/**
 * Tells the listeners now if the last tell is `followIntervalMs` old, else
 * once it is (one tell for everything heard meanwhile: the engine's
 * catch-up reads up to the head, whoever moved it how many times).
 */
const tell = (state: LogState, follow: Follower): void => {
  if (follow.trailing !== undefined) return;
  const wait = follow.toldAt + state.options.followIntervalMs - performance.now();
  if (wait <= 0) {
    tellNow(follow);
    return;
  }
  follow.trailing = setTimeout(() => {
    follow.trailing = undefined;
    tellNow(follow);
  }, wait);
};

/** A notification's payload: `WRITER:LAST`; others' past what this log knows wake the listeners. */
const heard = (state: LogState, follow: Follower, payload: string): void => {
  const [writer, last] = payload.split(":");
  if (writer === follow.writerId || last === undefined) return;
  if (Number(last) > state.committedLast) tell(state, follow);
};

/** Connects the follower's session and LISTENs on it where the database allows. */
const listen = (state: LogState, follow: Follower) =>
  Effect.gen(function* () {
    // Not interrupted mid-connect: a connection made after the stop is
    // closed in the same uninterruptible step, or it would leak (and keep
    // the process alive).
    const session = yield* Effect.uninterruptible(
      Effect.flatMap(connect(state.driver), (connected) => {
        if (follow.stopped) return Effect.as(close(connected), undefined);
        follow.session = connected;
        return Effect.succeed(connected);
      }),
    );
    if (session === undefined) return;
    follow.listening = false;
    session.onLost?.(() => lost(follow, session));
    // A notification owed while there was no session goes now.
    follow.resend();
    if (!state.options.notifications || session.onNotification === undefined) return;
    session.onNotification((_, payload) => heard(state, follow, payload));
    const listened = yield* Effect.either(
      run(session, notifications.listen(channel(state.storeId))),
    );
    follow.listening = listened._tag === "Right";
    // The connection went while it listened: connect again (the loop does, with no session).
    if (listened._tag === "Left" && listened.left.connection) lost(follow, session);
  });

/**
 * One look at the head: the others moved it past what this log knows, in
 * its generation or onto another (another writer compacted: the engine's
 * catch-up follows it there; a poll that told only of its own generation
 * left an engine without LISTEN deaf to everything after a compaction).
 */
const poll = (state: LogState, follow: Follower, session: Session) =>
  Effect.gen(function* () {
    const head = yield* Effect.either(readHead(state, session));
    if (head._tag === "Right") {
      const { epoch, lastSequence } = head.right;
      if (epoch !== state.epoch || lastSequence > state.committedLast) tell(state, follow);
      return;
    }
    if (isFailure(head.left) && head.left.connection) lost(follow, session);
  });

/** The follower's loop: (re)connect and listen, poll the head, sleep; until interrupted. */
const following = (state: LogState, follow: Follower): Effect.Effect<void> =>
  Effect.forever(
    Effect.gen(function* () {
      const interval = state.options.pollIntervalMs;
      const session = follow.session;
      if (session === undefined) {
        const connected = yield* Effect.either(listen(state, follow));
        if (connected._tag === "Left") yield* Effect.sleep(Duration.millis(interval));
        return;
      }
      // Listened for before the poll: a loss the poll itself finds (the
      // driver had not told it) ends the sleep at once, instead of leaving
      // the follower without a session for a whole interval.
      const woken = yield* Deferred.make<void>();
      follow.woken = woken;
      yield* poll(state, follow, session);
      yield* Effect.raceFirst(
        Effect.sleep(Duration.millis(follow.listening ? interval * 10 : interval)),
        Deferred.await(woken),
      );
      follow.woken = undefined;
    }),
  );

/**
 * Calls `listener` whenever another writer may have appended (`Log.watchOthers`);
 * the first listener starts the follower, the last one leaving stops it.
 */
export const watchOthers = (state: LogState, follow: Follower) => (listener: () => void) => {
  follow.listeners.add(listener);
  if (follow.fiber === undefined) {
    follow.stopped = false;
    follow.fiber = Effect.runFork(following(state, follow));
  }
  return () => {
    follow.listeners.delete(listener);
    if (follow.listeners.size === 0) stopFollowing(follow);
  };
};

/** Stops the follower and closes its session. */
export const stopFollowing = (follow: Follower): void => {
  const fiber = follow.fiber;
  follow.fiber = undefined;
  follow.stopped = true;
  const session = follow.session;
  follow.session = undefined;
  follow.listening = false;
  if (follow.trailing !== undefined) clearTimeout(follow.trailing);
  follow.trailing = undefined;
  if (follow.owing !== undefined) clearTimeout(follow.owing);
  follow.owing = undefined;
  if (fiber !== undefined) Effect.runFork(Fiber.interrupt(fiber));
  if (session !== undefined) void session.close();
};

/** Whether this log's next notification may go now: the last one is `followIntervalMs` old. */
const noticeDue = (state: LogState, follow: Follower): boolean =>
  performance.now() >= follow.noticedAt + state.options.followIntervalMs;

/**
 * Tells the other writers this log committed up to `last`, at most once
 * per `followIntervalMs` (see the module's comment): inside the commit's
 * own script where it said so (`notified`), else after COMMIT on the
 * follower's session without holding the writer, at once if the last
 * notification is an interval old, or at the interval's end (unless an
 * append's script told them first). One notification at a time, the
 * latest last sequence sent next.
 */
export const notifyCommitted =
  (state: LogState, follow: Follower) => (last: number, notified: boolean) => {
    if (notified) {
      // The commit's own script told them (and anything older still owed is older news).
      follow.latest = undefined;
      follow.noticedAt = performance.now();
      if (follow.owing !== undefined) clearTimeout(follow.owing);
      follow.owing = undefined;
      return;
    }
    follow.latest = last;
    owe(state, follow);
  };

/** Sends the owed notification now if the last one is an interval old, else at the interval's end. */
const owe = (state: LogState, follow: Follower): void => {
  follow.resend = () => {
    if (!follow.sending) send(state, follow);
  };
  if (follow.sending || follow.owing !== undefined || follow.latest === undefined) return;
  const wait = follow.noticedAt + state.options.followIntervalMs - performance.now();
  if (wait <= 0) {
    send(state, follow);
    return;
  }
  follow.owing = setTimeout(() => {
    follow.owing = undefined;
    if (!follow.sending) send(state, follow);
  }, wait);
};

/** Sends the latest notification owed (`follow.latest`) on the follower's session; what is owed meanwhile follows, throttled. */
const send = (state: LogState, follow: Follower): void => {
  const session = follow.session;
  const value = follow.latest;
  if (session === undefined || value === undefined || !follow.notifying) {
    follow.sending = false;
    return;
  }
  follow.latest = undefined;
  follow.sending = true;
  follow.noticedAt = performance.now();
  const payload = `${follow.writerId}:${value}`;
  void session.query(notifications.notify, [channel(state.storeId), payload]).then((result) => {
    if (!("_tag" in result) && state.inlineNotice === undefined) {
      // The database takes pg_notify: the next appends send theirs in
      // their own script, at their commit, without this round trip.
      const name = channel(state.storeId);
      state.inlineNotice = (next) =>
        noticeDue(state, follow)
          ? { channel: name, payload: `${follow.writerId}:${next}` }
          : undefined;
    }
    if ("_tag" in result) {
      // A database without pg_notify refuses it: the others poll. A lost
      // session owes the value again, sent once the follower reconnects.
      if (!result.connection) follow.notifying = false;
      else {
        follow.latest ??= value;
        lost(follow, session);
      }
    }
    follow.sending = false;
    owe(state, follow);
  });
};
