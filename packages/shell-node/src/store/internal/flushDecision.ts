/**
 * The pure leaf of the writer's loop: given what is pending and the clock,
 * should it flush now, at a known time, or only when woken?
 */
import type { FlushPolicy } from "../StoreOptions.js";

export interface FlushInputs {
  /** Records submitted and not yet taken by a write. */
  readonly pendingRecords: number;
  /** When the last flush finished (or the writer started), ms. */
  readonly lastFlushAt: number;
  readonly now: number;
  /** `flush()` or close asked for everything pending to be written. */
  readonly forced: boolean;
}

export type FlushDecision =
  | { readonly _tag: "Now" }
  | { readonly _tag: "At"; readonly at: number }
  | { readonly _tag: "Wait" };

const now: FlushDecision = { _tag: "Now" };
const wait: FlushDecision = { _tag: "Wait" };
const at = (time: number): FlushDecision => ({ _tag: "At", at: time });

/**
 * Decides per `policy`. `Wait` means "until a submit, a `flush()` or close
 * wakes the writer"; `At` means "then, unless woken first".
 */
export const decide = (policy: FlushPolicy, inputs: FlushInputs): FlushDecision => {
  const { pendingRecords, lastFlushAt, forced } = inputs;
  if (pendingRecords === 0) return wait;
  if (forced) return now;
  const elapsed = inputs.now - lastFlushAt;
  switch (policy._tag) {
    case "Immediate":
      return now;
    case "Manual":
      return wait;
    case "Batch":
      return pendingRecords >= policy.batchRecords ? now : wait;
    case "Interval":
      return elapsed >= policy.intervalMs ? now : at(lastFlushAt + policy.intervalMs);
    case "BatchOrInterval":
      if (pendingRecords >= policy.batchRecords || elapsed >= policy.intervalMs) return now;
      return at(lastFlushAt + policy.intervalMs);
    case "BatchOrIntervalMin": {
      if (pendingRecords >= policy.batchRecords) return now;
      if (elapsed >= policy.intervalMsMax) return now;
      if (pendingRecords >= policy.batchRecordsMin) {
        return elapsed >= policy.intervalMs ? now : at(lastFlushAt + policy.intervalMs);
      }
      // Too few for the interval: only the safety valve can fire.
      return at(lastFlushAt + policy.intervalMsMax);
    }
    default: {
      const unknownPolicy: never = policy;
      return unknownPolicy;
    }
  }
};
