/**
 * The folder: how a running log offers the inbox's rows to its engine
 * (`Log.incoming`). One session of its own LISTENs on the inbox channel
 * (an enqueue notifies it from inside the application's transaction, so
 * the notification arrives once that transaction commits) and reads the
 * oldest waiting rows, in key order, when told, every `pollIntervalMs`
 * where LISTEN is refused and ten times slower as a safety net where it
 * works. The rows read are offered to the engine, which decides them at the
 * head of its next drain; the log's writer deletes them in the transaction
 * that appends their records (`Batch.consumed`).
 *
 * One page is in the engine's hands at a time: the next is read once every
 * row of this one is settled, so a later page never overtakes an earlier
 * one. A row the engine could not append this time (a conflict: maybe
 * another engine folded it) is read again only if it is still there. A row
 * that cannot be folded (the deciders refuse it, or it does not decode) is
 * kept, marked with why, and never offered again.
 */
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Fiber from "effect/Fiber";
import type { Log } from "@tay/shell-node";
import type { Session } from "../Driver.js";
import { decodeRow, keyOf } from "./inboxRow.js";
import * as Rows from "./rows.js";
import { close, connect, run } from "./session.js";
import { inboxChannel, notifications } from "./sql.js";
import type { LogState } from "./state.js";

/** The folder's counters. */
export interface InboxStats {
  /** Rows appended (their jobs in the log, the rows deleted). */
  readonly folded: number;
  /** Rows marked refused (never offered again). */
  readonly refused: number;
  /** Rows handed back not appended (a conflict, a failed append): read again if still there. */
  readonly returned: number;
  /** Pages read that held rows. */
  readonly pages: number;
}

/** The folder's state. */
export interface Folder {
  readonly listeners: Set<() => void>;
  session: Session | undefined;
  listening: boolean;
  fiber: Fiber.RuntimeFiber<void> | undefined;
  stopped: boolean;
  /** Read and not taken yet. */
  offered: Array<Log.Incoming>;
  /** Taken by the engine and not settled. */
  readonly taken: Set<string>;
  /** Rows to mark refused, with why. */
  refusals: Array<{ readonly key: string; readonly reason: string }>;
  /** Wakes the loop (set while it waits). */
  wake: (() => void) | undefined;
  /** A wake-up that came while the loop was busy: it reads again before sleeping. */
  woken: boolean;
  /**
   * Wait `inboxLingerMs` before the next read: a row came into an empty
   * inbox (its notification), or a page that was not full settled.
   */
  lingerNext: boolean;
  /** The last page read held `inboxPageRows` rows: more may be waiting. */
  lastPageFull: boolean;
  /** A row of the last page came back not appended (another engine folded it first). */
  lost: boolean;
  /** How long the next step aside lasts (`yieldMsMin`, doubling while pages are lost). */
  yieldMs: number;
  /** How long the next look for an open writer's row waits (`soonMsMin` doubling). */
  soonMs: number;
  counts: { folded: number; refused: number; returned: number; pages: number };
}

/**
 * The first wait of a folder that saw an open writer of the inbox; doubled
 * on each look that sees one again, up to `soonMsMax` (or the poll
 * interval, if shorter): a row committed without a notification waits at
 * most that long once its transaction ends, however long it stayed open.
 */
const soonMsMin = 2;
const soonMsMax = 250;

/**
 * How long a folder waits before its next read once a page came back not
 * appended: every engine's folder hears the same notification and reads
 * the same rows, and all but one lose them; the losers step aside instead
 * of racing the winner for every page, twice as long after each page lost
 * in a row, up to `yieldMsMax`, and from `yieldMsMin` again once a row of
 * theirs folds.
 */
const yieldMsMin = 20;
const yieldMsMax = 160;

/** A folder of `state`'s store, not started. */
export const folder = (): Folder => ({
  listeners: new Set(),
  session: undefined,
  listening: false,
  fiber: undefined,
  stopped: false,
  offered: [],
  taken: new Set(),
  refusals: [],
  wake: undefined,
  woken: false,
  lingerNext: false,
  lastPageFull: false,
  lost: false,
  yieldMs: yieldMsMin,
  soonMs: soonMsMin,
  counts: { folded: 0, refused: 0, returned: 0, pages: 0 },
});

const wakeFolder = (fold: Folder): void => {
  const wake = fold.wake;
  fold.wake = undefined;
  if (wake === undefined) fold.woken = true;
  else wake();
};

const tell = (fold: Folder): void => {
  for (const listener of [...fold.listeners]) listener();
};

/** Connects the folder's session and LISTENs on the inbox channel where the database allows. */
const listen = (state: LogState, fold: Folder) =>
  Effect.gen(function* () {
    const session = yield* Effect.uninterruptible(
      Effect.flatMap(connect(state.driver), (connected) => {
        if (fold.stopped) return Effect.as(close(connected), undefined);
        fold.session = connected;
        return Effect.succeed(connected);
      }),
    );
    if (session === undefined) return;
    fold.listening = false;
    if (!state.options.notifications || session.onNotification === undefined) return;
    const ours = `${state.options.schema}.${state.options.store}`;
    session.onNotification((channel, payload) => {
      if (channel === inboxChannel && payload === ours) {
        fold.lingerNext = true;
        wakeFolder(fold);
      }
    });
    const listened = yield* Effect.either(run(session, notifications.listen(inboxChannel)));
    fold.listening = listened._tag === "Right";
  });

/** Marks the refused rows (kept in the inbox with why, never offered again). */
const markRefusals = (state: LogState, fold: Folder, session: Session) =>
  Effect.gen(function* () {
    while (fold.refusals.length > 0) {
      const [next] = fold.refusals;
      if (next === undefined) return;
      yield* run(session, state.sql.inboxRefuse, [state.options.store, next.key, next.reason]);
      fold.refusals.shift();
    }
  });

/** Reads the oldest waiting rows and offers those that decode; the others are marked. */
const readPage = (state: LogState, fold: Folder, session: Session) =>
  Effect.gen(function* () {
    const { rows } = yield* run(session, state.sql.inboxPage, [
      state.options.store,
      state.options.inboxPageRows,
    ]);
    const offered: Array<Log.Incoming> = [];
    for (const row of rows) {
      const decoded = decodeRow(row);
      if (typeof decoded !== "string") offered.push(decoded);
      else {
        const key = keyOf(row);
        if (key !== undefined) fold.refusals.push({ key, reason: decoded });
      }
    }
    if (offered.length > 0) fold.counts.pages += 1;
    fold.lastPageFull = rows.length >= state.options.inboxPageRows;
    fold.offered = offered;
    return offered.length > 0 || fold.refusals.length > 0;
  });

/** Sleeps until woken or `ms` passed. */
const sleep = (fold: Folder, ms: number) =>
  Effect.async<void>((resume) => {
    if (fold.woken) {
      fold.woken = false;
      resume(Effect.void);
      return;
    }
    const timer = setTimeout(() => {
      fold.wake = undefined;
      resume(Effect.void);
    }, ms);
    fold.wake = () => {
      clearTimeout(timer);
      resume(Effect.void);
    };
    return Effect.sync(() => clearTimeout(timer));
  });

/**
 * What the loop does after a turn: read on at once, look again soon (an
 * open writer of the inbox may commit a row it did not notify), or sleep
 * until woken.
 */
type Next = "again" | "soon" | "idle";

/**
 * Whether another session holds a writer's lock on the inbox; a database
 * that cannot tell (no `pg_locks`) is taken to have one, so the folder
 * looks again within `soonMsMax` rather than sleeping ten poll intervals.
 * (`pg_locks` takes the lock manager's partition locks for a moment: at
 * most one look per `soonMsMin`, doubling, and only while a read finds
 * nothing.)
 */
const othersWriting = (state: LogState, session: Session) =>
  Effect.map(
    Effect.either(run(session, notifications.inboxWriters(state.options.schema))),
    (checked) => {
      if (checked._tag === "Left") return true;
      const writing = Rows.field(checked.right.rows[0], "writing");
      // A boolean as node-postgres parses it, or as text.
      return !(writing === false || writing === "f");
    },
  );

/**
 * Nothing was waiting. Listening, the folder may be the one a row without
 * a notification relies on (`notifications.inboxInsertNotify`): it looks
 * for open writers first, then reads once more, so a row committed after
 * that look is in the read, and one committed later has a writer it saw.
 */
const nothingWaiting = (state: LogState, fold: Folder, session: Session) =>
  Effect.gen(function* () {
    if (!fold.listening) return "idle" as const;
    const writing = yield* othersWriting(state, session);
    if (yield* readPage(state, fold, session)) return undefined;
    return writing ? ("soon" as const) : ("idle" as const);
  });

/** One turn: mark refusals, read a page when nothing is in the engine's hands, offer it. */
const turn = (state: LogState, fold: Folder, session: Session) =>
  Effect.gen(function* () {
    yield* markRefusals(state, fold, session);
    if (fold.taken.size > 0) return "idle" as Next;
    // Offered but never taken (the engine was busy or closing): offer again.
    if (fold.offered.length === 0 && !(yield* readPage(state, fold, session))) {
      const next = yield* nothingWaiting(state, fold, session);
      if (next !== undefined) return next;
    }
    if (fold.offered.length > 0) tell(fold);
    return fold.offered.length === 0 && fold.refusals.length > 0 ? "again" : "idle";
  });

/** The folder's loop: (re)connect and listen, read and offer, sleep; until interrupted. */
const folding = (state: LogState, fold: Folder): Effect.Effect<void> =>
  Effect.forever(
    Effect.gen(function* () {
      const interval = state.options.pollIntervalMs;
      const session = fold.session;
      if (session === undefined) {
        const connected = yield* Effect.either(listen(state, fold));
        if (connected._tag === "Left") yield* Effect.sleep(Duration.millis(interval));
        return;
      }
      yield* linger(state, fold);
      const result = yield* Effect.either(turn(state, fold, session));
      if (result._tag === "Left") {
        if (result.left.connection) {
          fold.session = undefined;
          fold.listening = false;
          yield* close(session);
        }
        yield* Effect.sleep(Duration.millis(interval));
        return;
      }
      // Refusals marked and nothing offered: read on at once.
      if (result.right === "again") return;
      if (result.right === "soon") {
        const ms = fold.soonMs;
        fold.soonMs = Math.min(ms * 2, soonMsMax, interval);
        yield* sleep(fold, ms);
        return;
      }
      fold.soonMs = soonMsMin;
      yield* sleep(fold, fold.listening ? interval * 10 : interval);
    }),
  );

/**
 * Before a read: steps aside after a lost page (`yieldMsMin`, docs/
 * postgres.md, "A folder that lost a page steps aside"); otherwise waits
 * `inboxLingerMs` before a read that follows a notification (a row
 * came into an empty inbox) or a page that was not full, so that the rows
 * committed meanwhile fold together: with producers enqueueing steadily,
 * the folder read one row a page, the engine appended (and flushed) once a
 * row, and the producers' commits waited behind those flushes (docs/
 * postgres.md, "The folder lingers"). A full page means a backlog: the
 * next is read at once.
 */
const linger = (state: LogState, fold: Folder) =>
  Effect.suspend(() => {
    // Only before a read: with a page in the engine's hands (or offered) the turn reads nothing.
    if (fold.taken.size > 0 || fold.offered.length > 0) return Effect.void;
    if (fold.lost) {
      fold.lost = false;
      const ms = fold.yieldMs;
      fold.yieldMs = Math.min(ms * 2, yieldMsMax);
      return Effect.sleep(Duration.millis(ms));
    }
    const ms = state.options.inboxLingerMs;
    if (!fold.lingerNext || ms === 0) return Effect.void;
    fold.lingerNext = false;
    return Effect.sleep(Duration.millis(ms));
  });

/** Stops the folder and closes its session. */
export const stopFolding = (fold: Folder): void => {
  const fiber = fold.fiber;
  fold.fiber = undefined;
  fold.stopped = true;
  const session = fold.session;
  fold.session = undefined;
  fold.listening = false;
  if (fiber !== undefined) Effect.runFork(Fiber.interrupt(fiber));
  if (session !== undefined) void session.close();
};

/** What became of a taken row. */
const settled = (fold: Folder) => (key: string, outcome: Log.IncomingOutcome) => {
  if (!fold.taken.delete(key)) return;
  switch (outcome._tag) {
    case "Appended":
      fold.counts.folded += 1;
      fold.yieldMs = yieldMsMin;
      break;
    case "Refused":
      fold.counts.refused += 1;
      fold.refusals.push({ key, reason: outcome.reason });
      break;
    case "NotAppended":
      fold.counts.returned += 1;
      fold.lost = true;
      break;
    default: {
      const unknown: never = outcome;
      return unknown;
    }
  }
  // The page is done: read the next one, at once after a full page (a backlog), else after
  // the linger (the rows committed meanwhile fold together).
  if (fold.taken.size === 0) {
    if (!fold.lastPageFull) fold.lingerNext = true;
    wakeFolder(fold);
  }
};

/**
 * The log's `incoming`: the first listener starts the folder, the last
 * one leaving stops it; `take` hands over what was read.
 */
export const incomingJobs = (state: LogState, fold: Folder): Log.IncomingJobs => ({
  watch: (listener) => {
    fold.listeners.add(listener);
    if (fold.fiber === undefined) {
      fold.stopped = false;
      fold.fiber = Effect.runFork(folding(state, fold));
    }
    return () => {
      fold.listeners.delete(listener);
      if (fold.listeners.size === 0) stopFolding(fold);
    };
  },
  take: () => {
    const offered = fold.offered;
    fold.offered = [];
    for (const incoming of offered) fold.taken.add(incoming.key);
    return offered;
  },
  settled: settled(fold),
});
