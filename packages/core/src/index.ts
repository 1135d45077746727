/**
 * @tay/core — the pure domain of Tay: values, typed events, state, fold and
 * deciders. No I/O, no clock, no exceptions.
 */
export * as Value from "./Value.js";
export * as Event from "./Event.js";
export * as Limits from "./Limits.js";
export * as HistoryError from "./HistoryError.js";
export * as Job from "./Job.js";
export * as Schedule from "./Schedule.js";
export * as Queue from "./Queue.js";
export * as State from "./State.js";
export * as Evolve from "./Evolve.js";
export * as Generation from "./Generation.js";
export * as Commands from "./Commands.js";
export * as Rejection from "./Rejection.js";
export * as Decide from "./Decide.js";
export * as Snapshot from "./Snapshot.js";
export * as Image from "./Image.js";
export * as Query from "./Query.js";
export * as Cron from "./Cron.js";
export * as Zone from "./Zone.js";
export * as Due from "./Due.js";
export * as Backoff from "./Backoff.js";
export * as Terminal from "./Terminal.js";
export * as Progress from "./Progress.js";
export * as JobHistory from "./JobHistory.js";
