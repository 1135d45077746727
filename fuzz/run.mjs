#!/usr/bin/env node
// `pnpm fuzz [--inputs N | --per-decoder N] [--seed S]`: runs the codec's fuzzer (packages/codec/test/support/fuzz.ts)
// through its vitest suite on N random and mutated inputs in all (default 1,000,000), spread
// evenly over every decoder (value, record, segment header and footer, STORE-V2, MANIFEST,
// CURRENT, store id, every event payload), and prints each decoder's counts. Fails if any input
// makes a decoder throw, answer untyped, or reach its Defect guard.
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    inputs: { type: "string", default: "1000000" },
    seed: { type: "string", default: String(Date.now() % 1_000_000) },
    decoders: { type: "string", default: "28" },
    // Inputs to each decoder, instead of --inputs spread over them.
    "per-decoder": { type: "string" },
  },
});
const inputs = Number(values.inputs);
const decoders = Number(values.decoders);
if (!Number.isSafeInteger(inputs) || inputs < 1) {
  console.error(`fuzz: --inputs must be a positive integer, not ${values.inputs}`);
  process.exit(2);
}
const perDecoder =
  values["per-decoder"] === undefined
    ? Math.ceil(inputs / decoders)
    : Number(values["per-decoder"]);
if (!Number.isSafeInteger(perDecoder) || perDecoder < 1) {
  console.error(`fuzz: --per-decoder must be a positive integer, not ${values["per-decoder"]}`);
  process.exit(2);
}
console.log(
  `fuzz: ${perDecoder} inputs to each decoder (${decoders} decoders expected), seed ${values.seed}`,
);
const run = spawnSync("npx", ["vitest", "run", "packages/codec/test/Fuzz.test.ts"], {
  stdio: "inherit",
  env: { ...process.env, TAY_FUZZ_INPUTS: String(perDecoder), TAY_FUZZ_SEED: values.seed },
});
process.exit(run.status ?? 1);
