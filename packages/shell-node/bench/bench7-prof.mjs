import { Effect } from "effect";
import { Engine, Init, NodeDisk } from "../dist/index.js";
import { rmSync } from "node:fs";
const dir = "/work/main/bench/tmp/bench7-prof";
rmSync(dir, { recursive: true, force: true });
const args = "x".repeat(200);
const n = Number(process.argv[2] ?? 20000), c = Number(process.argv[3] ?? 256);
const program = Effect.gen(function* () {
  yield* Init.init(dir);
  return yield* Effect.scoped(Effect.gen(function* () {
    const engine = yield* Engine.open(dir, { durability: process.argv[4] ?? "Maximal" });
    const t0 = performance.now();
    yield* Effect.forEach(Array.from({ length: n }, (_, i) => i), () => engine.insert({ queue: "q", worker: "W", args }), { concurrency: c, discard: true });
    const t1 = performance.now();
    return { ms: t1 - t0, perSec: n / ((t1 - t0) / 1000), stats: yield* engine.store.stats() };
  }));
});
console.log(await Effect.runPromise(Effect.provide(program, NodeDisk.layer)));
