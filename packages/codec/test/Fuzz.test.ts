// Proves that no decoder throws or answers untyped for any input: random and mutated inputs (seeded
// from the committed fixtures, CRCs re-sealed half the time) go to the value, record, segment
// header and footer, STORE-V2, MANIFEST, CURRENT and store-id decoders and to the payload decoder
// of every declared event pair, and each must return a value or a tagged refusal, never a Defect.
// This is a sample; `pnpm fuzz` runs the same fuzzer on 1,000,000 inputs or more (`--inputs N`).
import { describe, expect, it } from "vitest";
import { fuzz, targets } from "./support/fuzz.js";

const inputsPerTarget = Number(process.env.TAY_FUZZ_INPUTS ?? 1_500);
const seed = Number(process.env.TAY_FUZZ_SEED ?? 1);

describe("fuzz", () => {
  it("every decoder has seeds", () => {
    for (const target of targets()) expect(target.seeds.length, target.name).toBeGreaterThan(0);
  });

  it("every event pair is seeded with fixtures of its own pair (another pair's payloads rarely decode)", () => {
    const borrowing = targets().filter((target) => target.borrowedSeeds === true);
    expect(borrowing.map((target) => target.name)).toEqual([]);
  });

  it(
    `${inputsPerTarget} random and mutated inputs per decoder: a value or a typed refusal each`,
    async () => {
      const started = performance.now();
      const reports = await fuzz(inputsPerTarget, seed);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const total = reports.reduce((sum, report) => sum + report.inputs, 0);
      console.log(
        `fuzz (seed ${seed}): ${total} inputs to ${reports.length} decoders in ${seconds} s, no throw, every result typed:\n${reports
          .map(
            (report) =>
              `  ${report.name}: ${report.inputs} inputs, ${report.valid} decoded, ${report.inputs - report.valid - report.failures.length} refused`,
          )
          .join("\n")}`,
      );
      for (const report of reports) expect(report.failures, report.name).toEqual([]);
      // The mutations reach past the checksums: some inputs of every fixed layout still decode.
      for (const report of reports) {
        if (!report.name.startsWith("store id")) {
          expect(report.valid, report.name).toBeGreaterThan(0);
        }
      }
      // Ten minutes, or more for long runs (`pnpm fuzz --per-decoder 1000000` on a loaded machine).
    },
    Math.max(600_000, inputsPerTarget * 3),
  );
});
