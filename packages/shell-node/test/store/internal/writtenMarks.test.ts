/**
 * `StoreView.digests` of a busy store (docs/store.md, "Checkpoints under
 * load"): the segments' digests as they were right after the write that
 * ended at a sequence, while later records are pending, after they were
 * written, after the segment was sealed, and not once that write is
 * older than the marks kept.
 */
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import * as Projection from "../../../src/log/Projection.js";
import * as Store from "../../../src/store/Store.js";
import * as StoreOptions from "../../../src/store/StoreOptions.js";
import { marksKept } from "../../../src/store/internal/writtenMarks.js";
import { initialized, inserted, nodeDisk } from "../../support/store.js";

describe("the digests at a sequence", () => {
  it.scopedLive("are the idle store's, while later records are pending and after", () =>
    Effect.gen(function* () {
      const directory = yield* initialized;
      const { store, log } = yield* Store.open(
        directory,
        { flush: StoreOptions.Manual, rotationTargetBytes: 600 },
        Projection.count,
      );
      let jobId = 0;
      const write = (count: number) =>
        Effect.gen(function* () {
          const events = Array.from({ length: count }, () => inserted(++jobId, 40));
          const submitted = yield* store.submit(events);
          yield* store.flush();
          yield* submitted.durable;
          return submitted.lastSequence;
        });
      const first = yield* write(1);
      const idle = yield* log.view.digests(first);
      // Not at a rotation (an idle store names its new, empty segment too).
      expect(idle?.segments.map((segment) => segment.records)).toEqual([1]);
      expect(idle?.lastSequence).toBe(first);
      // Records after `first` pending, not written: the same digests.
      const pending = yield* store.submit([inserted(++jobId, 40)]);
      expect(yield* log.view.digests(first)).toEqual(idle);
      expect(yield* log.view.digests(pending.lastSequence)).toBeUndefined();
      yield* store.flush();
      yield* pending.durable;
      // Written since, and the segment sealed after enough more: still the same.
      const later = yield* write(3);
      expect(yield* log.view.digests(first)).toEqual(idle);
      const segments = (yield* log.view.digests(later))?.segments ?? [];
      expect(segments.length).toBeGreaterThan(idle?.segments.length ?? 0);
      // A sequence inside a write, not at its end, was never an instant of the files.
      expect(yield* log.view.digests(later - 1)).toBeUndefined();
      for (let write_ = 0; write_ < marksKept; write_++) yield* write(1);
      expect(yield* log.view.digests(first)).toBeUndefined();
    }).pipe(Effect.provide(nodeDisk)),
  );
});
