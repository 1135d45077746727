/**
 * One engine of Inbox.test.ts's crash case: it loads the BUILT dist, opens
 * an engine over the PostgreSQL store at URL (no rescue, no timers) and
 * folds the inbox until killed, printing `committed LAST` after each batch
 * it committed (the parent SIGKILLs it after the first, mid-fold).
 *
 *   node inbox-child.mjs URL
 */
import { Effect } from "effect";

const [url] = process.argv.slice(2);
if (url === undefined) {
  process.stderr.write("usage: inbox-child.mjs URL\n");
  process.exit(2);
}
const { PgLog } = await import(new URL("../../dist/index.js", import.meta.url).href);
const { Engine, StateProjection } = await import("@tay/shell-node");

const program = Effect.scoped(
  Effect.gen(function* () {
    // Small transactions, so that the kill lands between two of them.
    const recovered = yield* PgLog.open(
      url,
      { inboxPageRows: 50, pollIntervalMs: 100 },
      StateProjection.foldProjection,
    );
    const engine = yield* Engine.fromLog(recovered, { timers: false, rescueOnOpen: false });
    engine.watch((records) => {
      const last = records[records.length - 1];
      if (last !== undefined) process.stdout.write(`committed ${last.sequence}\n`);
    });
    process.stdout.write("ready\n");
    yield* Effect.never;
  }),
);

Effect.runPromiseExit(program).then((exit) => {
  if (exit._tag === "Failure") {
    process.stderr.write(`${String(exit.cause)}\n`);
    process.exit(1);
  }
});
