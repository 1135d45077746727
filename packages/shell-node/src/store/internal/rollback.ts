/**
 * The writer's rollback: after a batch's write or sync failed (or a
 * footer's), the active segment is put back to the end of the last batch
 * the writer acknowledged, and that is synced, before the writer stops.
 *
 * The writer owns those bytes: it wrote them and nobody was told they were
 * there, so taking them back is the writer undoing its own unacknowledged
 * work, not recovery repairing a torn tail (which EVENTS.md forbids and
 * which stays forbidden: open never truncates). Without it, a full disk
 * leaves part of a batch in the file (reopen refuses it: `IncompleteTail`)
 * and a failed sync leaves a whole rejected batch there (reopen shows
 * appends that were refused).
 *
 * Nothing is retried (fsyncgate): the failed batch is never written or
 * synced again, and the sync here is of the truncation only. It does not
 * make the failed batch's data trustworthy — it removes it; what the
 * earlier, acknowledged batches hold was made durable by their own
 * successful syncs. If the truncate or its sync fails too, the file may end
 * in bytes no append acknowledged, and the writer's error says the store
 * may need the operator.
 */
import * as Effect from "effect/Effect";
import { DiskError, type FileHandle } from "../../disk/Disk.js";
import type { Rollback } from "../StoreError.js";

/**
 * A file already shorter than what the writer acknowledged: something (a
 * failed sync dropping dirty pages, on a disk that also forgets the size)
 * took acknowledged bytes away. Truncating "back" would extend it with
 * zeros, which reopen would read as corruption, so it is left alone.
 */
const shorterThanAcknowledged = (path: string, found: number, size: number): DiskError =>
  new DiskError({
    operation: "truncate",
    path,
    code: "EIO",
    detail: `the file is ${found} bytes, shorter than the ${size} acknowledged: acknowledged bytes were lost, so it was not extended`,
  });

/**
 * Truncates `handle`'s file to `size` (the end of the last acknowledged
 * batch) and syncs it; never extends it. Never fails: the outcome says
 * whether the bytes past `size` are gone (`RolledBack`) or may still be
 * there, or acknowledged ones missing (`RollbackFailed`, with the size's,
 * the truncate's or the sync's error).
 */
export const rollBack = (handle: FileHandle, size: number): Effect.Effect<Rollback> =>
  Effect.match(
    Effect.gen(function* () {
      const found = yield* handle.size();
      if (found < size)
        return yield* Effect.fail(shorterThanAcknowledged(handle.path, found, size));
      yield* handle.truncate(size);
      yield* handle.sync();
    }),
    {
      onFailure: (cause): Rollback => ({ _tag: "RollbackFailed", path: handle.path, size, cause }),
      onSuccess: (): Rollback => ({ _tag: "RolledBack", path: handle.path, size }),
    },
  );
