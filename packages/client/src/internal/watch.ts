/**
 * A client's `watch`: every committed event told to a listener until the
 * watch is stopped, across the stream's drops. Before 2026-12-06 a watch
 * ended, unseen, with its first stream: after a server's restart (or a
 * dropped connection) its listener was never told anything again.
 *
 * A dropped stream is opened again after a pause, from the record of the
 * last event told, skipping the members of that record already told: no
 * commit made while the server was reachable is missed or told twice.
 * When the events since then were compacted away the watch goes on from
 * the next commit (it is advisory; `subscribe` fails with `Compacted`
 * instead), or, given `relocate`, from the sequence `relocate` answers,
 * after which `relocated` is called: a watcher that must not miss what the
 * gap held (`whenEnded`) reads what it waits for there (2026-12-06). It
 * ends for good when the server refuses the stream itself (a wrong token)
 * or the client is closed (`Transport.refusedForGood`).
 */
import { refusedForGood } from "../Transport.js";
import type * as Wire from "../Wire.js";

type Committed = Wire.CommittedEvent;

/** A subscription from `from` (or the next commit), closable. */
type Subscribe = (from: number | undefined) => AsyncIterableIterator<Committed> & {
  readonly close: () => void;
};

/** How long a dropped watch waits before it opens its stream again. */
export const watchReconnectMsDefault = 1_000;

/** Resolves after `ms`; `cancel` resolves it at once. */
const pause = (ms: number) => {
  let cancel = (): void => {};
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    cancel = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return { done, cancel };
};

const isCompacted = (error: unknown): boolean =>
  typeof error === "object" && error !== null && Reflect.get(error, "_tag") === "Compacted";

/** Where a watch whose place was compacted away goes on, for a watcher that must know of the gap. */
export interface Relocation {
  /** The sequence to open from now (the server's last one plus one); a failure is retried after the pause. */
  readonly relocate: () => Promise<number>;
  /** Called once `relocate` has answered: every commit up to it is readable, every later one will be told. */
  readonly relocated: () => void;
}

/** Watches through `subscribe` (from `from`, or the next commit); returns the function that stops it. */
export const watching = (
  subscribe: Subscribe,
  listener: (committed: ReadonlyArray<Committed>) => void,
  reconnectMs: number = watchReconnectMsDefault,
  from?: number,
  relocation?: Relocation,
): (() => void) => {
  let stopped = false;
  // Where a stream opens while no event was told: `from`, until compacted away.
  let start = from;
  let current: ReturnType<Subscribe> | undefined;
  let waiting: ReturnType<typeof pause> | undefined;
  // The last event told: the stream opens again at its record.
  let last: { readonly sequence: number; readonly member: number } | undefined;
  const toldAlready = (committed: Committed): boolean =>
    last !== undefined &&
    (committed.sequence < last.sequence ||
      (committed.sequence === last.sequence && committed.member <= last.member));
  // Set when the watch's place was compacted away and `relocation` must find a new one.
  let lost = false;
  void (async () => {
    while (!stopped) {
      if (lost && relocation !== undefined) {
        try {
          start = await relocation.relocate();
          lost = false;
          if (stopped) return;
          relocation.relocated();
        } catch (error) {
          if (stopped || refusedForGood(error)) return;
          waiting = pause(reconnectMs);
          await waiting.done;
          continue;
        }
      }
      current = subscribe(last?.sequence ?? start);
      try {
        for await (const committed of current) {
          if (toldAlready(committed)) continue;
          last = { sequence: committed.sequence, member: committed.member };
          listener([committed]);
        }
      } catch (error) {
        // Before the refusals: `Compacted` is a 410, yet only the watch's place is lost.
        if (isCompacted(error)) {
          last = undefined;
          start = undefined;
          lost = true;
        } else if (refusedForGood(error)) return;
      }
      if (stopped) return;
      waiting = pause(reconnectMs);
      await waiting.done;
    }
  })();
  return () => {
    stopped = true;
    current?.close();
    waiting?.cancel();
  };
};
