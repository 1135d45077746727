/**
 * Runs an Effect as a promise for callers outside Effect: it rejects with
 * the typed failure itself (not wrapped in a `FiberFailure`, as
 * `Effect.runPromise` does), so `error._tag` tells the kind; a defect or an
 * interruption rejects with its squashed cause.
 */
import * as Cause from "effect/Cause";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Option from "effect/Option";

export const runToPromise = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromiseExit(effect).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value;
    const failure = Cause.failureOption(exit.cause);
    throw Option.isSome(failure) ? failure.value : Cause.squash(exit.cause);
  });
