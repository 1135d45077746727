/**
 * The crash harness for property suites: `exploreCrashes` and its types
 * come from the shell's disk layer (`@tay/shell-node/testing`), beside the
 * `Disk` contract and the fault-injecting disk they drive; this module adds
 * `crashProperty`, which turns a scenario into a fast-check property.
 */
import { Crash } from "@tay/shell-node/testing";
import * as Effect from "effect/Effect";
import type * as fc from "fast-check";
import { asyncProperty } from "fast-check";

export * from "@tay/shell-node/testing/Crash";

/**
 * A fast-check property: for each generated workload description, explores
 * every crash of the scenario built from it and fails on the first broken
 * invariant, so fast-check shrinks to the smallest failing description.
 *
 * @example
 * await fc.assert(
 *   Crash.crashProperty(fc.array(fc.nat(), { maxLength: 5 }), (values) => ({ workload, check })),
 *   { numRuns: 20 },
 * );
 */
export const crashProperty = <W, A>(
  descriptions: fc.Arbitrary<W>,
  scenario: (description: W) => Crash.CrashScenario<A>,
  options: Crash.ExploreOptions = {},
): fc.IAsyncPropertyWithHooks<[W]> =>
  asyncProperty(descriptions, async (description) => {
    const built = scenario(description);
    const report = await Effect.runPromise(
      Crash.exploreCrashes(built.workload, built.check, {
        ...options,
        ...(built.setup === undefined ? {} : { setup: built.setup }),
        failFast: true,
      }),
    );
    const failure = report.failures[0];
    if (failure !== undefined) throw new Error(Crash.describeFailure(failure));
  });
