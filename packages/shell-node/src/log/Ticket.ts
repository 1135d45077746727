/**
 * How an append's caller learns that its records are durable: a ticket
 * for the last sequence of the append, settled once by the log, in
 * sequence order. Its waiters are plain callbacks (no fiber, no Deferred
 * per append): the engine answers a whole drain from one ticket.
 */
import * as Effect from "effect/Effect";

/** Told once how a ticket ended: `undefined` when durable, else why it failed. */
export type Waiter<E> = (failure: E | undefined) => void;

/** An append waiting for its last record to be durable (as the log's policy says). */
export interface Ticket<E> {
  readonly lastSequence: number;
  /** Whether the ticket has ended; `failure` says how. */
  settled: boolean;
  failure: E | undefined;
  /**
   * Called when it ends (emptied then): the first waiter, and the others
   * in the order they came. Most tickets have one (the engine's drain), so
   * a ticket makes no array until a second one comes.
   */
  waiter: Waiter<E> | undefined;
  more: Array<Waiter<E>> | undefined;
}

/** A ticket for an append ending at `lastSequence`, not yet settled. */
export const make = <E>(lastSequence: number): Ticket<E> => ({
  lastSequence,
  settled: false,
  failure: undefined,
  waiter: undefined,
  more: undefined,
});

/** Calls `waiter` when `ticket` ends (at once, if it has). */
export const onSettled = <E>(ticket: Ticket<E>, waiter: Waiter<E>): void => {
  if (ticket.settled) waiter(ticket.failure);
  else if (ticket.waiter === undefined) ticket.waiter = waiter;
  else if (ticket.more === undefined) ticket.more = [waiter];
  else ticket.more.push(waiter);
};

/** Ends `ticket` (a no-op if it has ended) and tells its waiters, in the order they came. */
export const settle = <E>(ticket: Ticket<E>, failure: E | undefined): void => {
  if (ticket.settled) return;
  ticket.settled = true;
  ticket.failure = failure;
  const { waiter, more } = ticket;
  ticket.waiter = undefined;
  ticket.more = undefined;
  if (waiter === undefined) return;
  if (more === undefined) {
    waiter(failure);
    return;
  }
  // A waiter that throws (a bug of its own) must not leave the ones after
  // it waiting forever: every waiter is told, then the first throw goes on.
  let thrown: { readonly error: unknown } | undefined;
  for (const each of [waiter, ...more]) {
    try {
      each(failure);
    } catch (error) {
      thrown ??= { error };
    }
  }
  if (thrown !== undefined) throw thrown.error;
};

/** Resolves once `ticket` ends: succeeds when durable, fails with its failure. */
export const wait = <E>(ticket: Ticket<E>): Effect.Effect<void, E> =>
  ticket.settled
    ? ticket.failure === undefined
      ? Effect.void
      : Effect.fail(ticket.failure)
    : Effect.async<void, E>((resume) => {
        onSettled(ticket, (failure) =>
          resume(failure === undefined ? Effect.void : Effect.fail(failure)),
        );
      });
