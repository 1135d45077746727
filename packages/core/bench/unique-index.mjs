// The unique index alone (not run by `pnpm bench`): inserts N keys through
// `withHolder`, keeping only the newest index as the fold does, and prints
// the time per insert and the heap it retains per key after two collections
// (the key strings are made and kept beforehand, so they are not counted).
// Keys in order are `key-N`; keys in no order `key-<hex of N×0x9e3779b1>`.
// Pass the compiled module to compare two builds (docs/benchmarks.md,
// "the unique index as one table"):
//   node --expose-gc packages/core/bench/unique-index.mjs [UniqueIndex.js] [order|random] [N]
import { resolve } from "node:path";

const modulePath = resolve(
  process.argv[2] ?? new URL("../dist/internal/UniqueIndex.js", import.meta.url).pathname,
);
const order = process.argv[3] ?? "random";
const count = Number(process.argv[4] ?? 1_000_000);
if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
const { UniqueIndex } = await import(modulePath);

const keys = new Array(count);
for (let index = 0; index < count; index++) {
  keys[index] =
    order === "order" ? `key-${index}` : `key-${((index * 0x9e3779b1) >>> 0).toString(16)}`;
}
globalThis.gc();
globalThis.gc();
const before = process.memoryUsage().heapUsed;
let unique = UniqueIndex.empty();
const started = performance.now();
for (let index = 0; index < count; index++)
  unique = unique.withHolder("default", keys[index], index + 1);
const elapsed = performance.now() - started;
globalThis.gc();
globalThis.gc();
const after = process.memoryUsage().heapUsed;
console.log(
  JSON.stringify({
    module: modulePath,
    order,
    keys: unique.size,
    microsPerInsert: Number(((elapsed * 1000) / count).toFixed(2)),
    retainedBytesPerKey: Math.round((after - before) / count),
  }),
);
