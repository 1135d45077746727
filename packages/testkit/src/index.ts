/**
 * @tay/testkit — fast-check arbitraries for values, events and valid
 * histories, a fault-injecting disk, a crash harness and fixture builders,
 * for Tay's own suites and for users' property suites.
 */
export * as Values from "./Values.js";
export * as Events from "./Events.js";
export * as Histories from "./Histories.js";
export * as FaultDisk from "./FaultDisk.js";
export * as Crash from "./Crash.js";
export * as Stores from "./Stores.js";
export * as Fixtures from "./Fixtures.js";
