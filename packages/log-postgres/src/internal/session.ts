/**
 * The driver's promises as Effects: a statement is an Effect that fails
 * with the driver's `Failure` (never a defect: the driver catches
 * everything), and a failure becomes the log's typed error where the
 * caller decides what it means.
 */
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import {
  type Bound,
  type Driver,
  type Failure,
  isFailure,
  type Parameter,
  type Result,
  type Session,
} from "../Driver.js";
import { DatabaseError } from "../PgError.js";

/**
 * `session`'s batch where the log sends its statements as one batch
 * (`oneTrip` "batch", the default); undefined where it sends scripts or
 * the driver has none.
 */
export const batchOf = (session: Session, oneTrip: "batch" | "script"): Session["batch"] =>
  oneTrip === "batch" ? session.batch : undefined;

/** Runs one statement on `session`. */
export const run = (
  session: Session,
  text: string,
  parameters: ReadonlyArray<Parameter> = [],
): Effect.Effect<Result, Failure> =>
  Effect.flatMap(
    Effect.promise(() => session.query(text, parameters)),
    (result) => (isFailure(result) ? Effect.fail(result) : Effect.succeed(result)),
  );

/**
 * Runs statements as one text on `session` (`Session.script`): one round
 * trip, one implicit transaction; their results in order.
 */
export const runScript = (
  script: (text: string) => Promise<ReadonlyArray<Result> | Failure>,
  text: string,
): Effect.Effect<ReadonlyArray<Result>, Failure> =>
  Effect.flatMap(
    Effect.promise(() => script(text)),
    (results) => (isFailure(results) ? Effect.fail(results) : Effect.succeed(results)),
  );

/**
 * Runs statements as one extended-protocol batch on `session`
 * (`Session.batch`): one round trip, one implicit transaction; their row counts in order.
 */
export const runBatch = (
  batch: (statements: ReadonlyArray<Bound>) => Promise<ReadonlyArray<Result> | Failure>,
  statements: ReadonlyArray<Bound>,
): Effect.Effect<ReadonlyArray<Result>, Failure> =>
  Effect.flatMap(
    Effect.promise(() => batch(statements)),
    (results) => (isFailure(results) ? Effect.fail(results) : Effect.succeed(results)),
  );

/** Opens a session. */
export const connect = (driver: Driver): Effect.Effect<Session, Failure> =>
  Effect.flatMap(
    Effect.promise(() => driver.connect()),
    (session) => (isFailure(session) ? Effect.fail(session) : Effect.succeed(session)),
  );

/** Closes a session; never fails. */
export const close = (session: Session): Effect.Effect<void> =>
  Effect.promise(() => session.close());

/** A driver failure as the log's error for `operation`. */
export const databaseError =
  (path: string, operation: string) =>
  (failure: Failure): DatabaseError =>
    new DatabaseError({ path, operation, code: failure.code, detail: failure.detail });

/** Whether a failure is worth running the same transaction again: a lost connection or a transient refusal. */
export const retriable = (failure: Failure): boolean =>
  failure.connection || failure.code === "40001" || failure.code === "40P01";

/**
 * The wait before reconnection `attempt` (0 for the first): `attempt + 1`
 * times `delayMs`, at most 2^31 - 1 ms. JavaScript timers take no more, and
 * Effect's live clock never ends a longer sleep: both options at their
 * bounds (3,600,000 ms, 1,000 attempts) would otherwise wait forever.
 */
export const reconnectWait = (delayMs: number, attempt: number): Duration.Duration =>
  Duration.millis(Math.min(delayMs * (attempt + 1), 2 ** 31 - 1));
