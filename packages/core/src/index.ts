/**
 * @tay/core — the pure domain of Tay: values, typed events, state, fold and
 * deciders. No I/O, no clock, no exceptions.
 */
export * as Value from "./Value.js";
export * as Event from "./Event.js";
export * as Limits from "./Limits.js";
