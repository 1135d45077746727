/**
 * @tay/testkit — fast-check arbitraries for values, events and valid
 * histories, a fault-injecting disk, a crash harness and fixture builders,
 * for Tay's own suites and for users' property suites.
 *
 * The pure parts load without the shell (and so without any native addon)
 * from their own entries: `@tay/testkit/values`, `@tay/testkit/events`,
 * `@tay/testkit/histories`. This entry loads all of them, the shell too;
 * the shell loads no native code until a lock is taken (fs-ext on Node,
 * `bun:ffi` on Bun, none on Deno), so this entry loads on Node, Bun and
 * Deno alike (`.ci/runtimes` imports it on each).
 */
export * as Values from "./Values.js";
export * as Events from "./Events.js";
export * as Histories from "./Histories.js";
export * as FaultDisk from "./FaultDisk.js";
export * as Crash from "./Crash.js";
export * as Stores from "./Stores.js";
export * as Fixtures from "./Fixtures.js";
