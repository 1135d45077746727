import { Effect } from "effect";
import { Engine, Init, NodeDisk } from "../dist/index.js";
import { rmSync } from "node:fs";
const dir = "/work/main/bench/tmp/bench7-smoke";
rmSync(dir, { recursive: true, force: true });
const args = "x".repeat(180);
const program = Effect.gen(function* () {
  yield* Init.init(dir);
  const result = yield* Effect.scoped(Effect.gen(function* () {
    const engine = yield* Engine.open(dir, { durability: "Maximal" });
    const t0 = performance.now();
    yield* Effect.forEach(Array.from({ length: 2000 }, (_, i) => i), (i) => engine.insert({ queue: "q", worker: "W", args }), { concurrency: 256, discard: true });
    const t1 = performance.now();
    const claimed = yield* engine.claim("q", 10);
    for (const j of claimed) yield* engine.complete(j.jobId);
    return { ms: t1 - t0, claimed: claimed.length, stats: yield* engine.store.stats(), counts: yield* engine.counts() };
  }));
  console.log(result);
  const again = yield* Effect.scoped(Effect.gen(function* () {
    const engine = yield* Engine.open(dir, {});
    return engine.report;
  }));
  console.log(again);
});
await Effect.runPromise(Effect.provide(program, NodeDisk.layer));
