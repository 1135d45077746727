/**
 * The README's library quickstart, verbatim but for the directory: if this
 * test breaks, the README is lying. It also covers `createIfMissing`, which
 * the quickstart relies on, on a missing, an initialised and a foreign
 * directory.
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import { Engine, EnginePromises, NodeDisk } from "../../src/index.js";
import { temporaryDirectory } from "../support/store.js";

// --- README quickstart (keep in sync with README.md) ---
const quickstart = (directory: string) =>
  Effect.gen(function* () {
    const engine = yield* Engine.open(directory, { createIfMissing: true, durability: "Maximal" });

    const job = yield* engine.insert({
      queue: "email",
      worker: "SendWelcome",
      args: new Map([["user_id", 42]]),
    });
    const [claimed] = yield* engine.claim("email", 1);
    if (claimed !== undefined) yield* engine.complete(claimed.jobId, "sent");

    yield* engine.registerSchedule("nightly-report", {
      queue: "reports",
      worker: "NightlyReport",
      args: null,
      priority: 0,
      maxAttempts: 3,
      everyMs: null,
      cron: "0 3 * * *",
      overlap: "skip",
    });
    yield* engine.tick(); // due jobs become available, due occurrences are delivered

    return { job, done: yield* engine.job(job.jobId) };
  }).pipe(Effect.scoped, Effect.provide(NodeDisk.layer));
// --- end of quickstart ---

// --- README quickstart without Effect (keep in sync with README.md) ---
const withoutEffect = async (directory: string, log: (line: unknown) => void) => {
  const tay = await EnginePromises.open(directory, { createIfMissing: true });
  try {
    const job = await tay.insert({ queue: "email", worker: "SendWelcome", args: "user-42" });
    const [claimed] = await tay.claim("email");
    if (claimed !== undefined) await tay.complete(claimed.jobId, "sent");
    log(tay.job(job.jobId)?.state); // "completed"
  } catch (error) {
    // A Rejected, WriterFailed, PendingFull... with the file, offset and reason it concerns.
    log(error);
  } finally {
    await tay.close();
  }
};
// --- end of quickstart without Effect ---

describe("README quickstart without Effect", () => {
  it.live("runs, logs the completed job, and releases the lock", () =>
    Effect.gen(function* () {
      const directory = path.join(yield* temporaryDirectory, "data");
      const lines: Array<unknown> = [];
      yield* Effect.promise(() => withoutEffect(directory, (line) => lines.push(line)));
      yield* Effect.promise(() => withoutEffect(directory, (line) => lines.push(line)));
      expect(lines).toEqual(["completed", "completed"]);
    }).pipe(Effect.scoped),
  );
});

describe("README quickstart", () => {
  it.scoped("runs, and running it again continues from the store", () =>
    Effect.gen(function* () {
      const directory = path.join(yield* temporaryDirectory, "data");
      const first = yield* quickstart(directory);
      expect(first.done?.state).toBe("completed");
      expect(first.done?.result?.value).toBe("sent");
      const second = yield* quickstart(directory);
      expect(second.job.jobId).toBe(2);
    }),
  );

  it.scoped("createIfMissing refuses a non-empty directory that holds no store", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      yield* Effect.promise(() => fs.writeFile(path.join(directory, "notes.txt"), "mine"));
      const refused = yield* Effect.flip(
        Effect.scoped(Engine.open(directory, { createIfMissing: true })),
      );
      expect(refused._tag).toBe("NotEmpty");
      const entries = yield* Effect.promise(() => fs.readdir(directory));
      expect(entries).toEqual(["notes.txt"]);
    }).pipe(Effect.provide(NodeDisk.layer)),
  );

  it.scoped("without createIfMissing a missing store is refused", () =>
    Effect.gen(function* () {
      const directory = path.join(yield* temporaryDirectory, "absent");
      const refused = yield* Effect.flip(Effect.scoped(Engine.open(directory)));
      expect(refused._tag).toBe("StoreNotFound");
    }).pipe(Effect.provide(NodeDisk.layer)),
  );
});
