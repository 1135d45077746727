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
 * instead). It ends for good when the server refuses the stream itself (a
 * wrong token) or the client is closed (`Transport.refusedForGood`).
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

/** Watches through `subscribe` (from `from`, or the next commit); returns the function that stops it. */
export const watching = (
  subscribe: Subscribe,
  listener: (committed: ReadonlyArray<Committed>) => void,
  reconnectMs: number = watchReconnectMsDefault,
  from?: number,
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
  void (async () => {
    while (!stopped) {
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
