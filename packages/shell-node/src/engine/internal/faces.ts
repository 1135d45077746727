/**
 * The engine's two faces, built from the one definition of its operations
 * (`operations.ts`): the Effect face (a command is an Effect run by the
 * caller's fiber; a query an `Effect.sync`) and the promise face (a command
 * is a promise; a query a plain synchronous call). Their types are mapped
 * from the same tables, so a command added there appears on both faces
 * with the same arguments and answer, documented once.
 */
import type * as Effect from "effect/Effect";
import type { Rejected } from "./engineRequest.js";
import { commands, type Issue, queries, type States } from "./operations.js";

type CommandTable = typeof commands;
type QueryTable = typeof queries;

/** Every command as an Effect that succeeds once durable, failing with `Rejected` or `X`. */
export type EffectCommands<X> = {
  readonly [Name in keyof CommandTable]: CommandTable[Name] extends (
    at: number,
    ...args: infer Args
  ) => Issue<infer A>
    ? (...args: Args) => Effect.Effect<A, Rejected | X>
    : never;
};

/** Every command as a promise that resolves once durable and rejects with the same errors. */
export type PromiseCommands = {
  readonly [Name in keyof CommandTable]: CommandTable[Name] extends (
    at: number,
    ...args: infer Args
  ) => Issue<infer A>
    ? (...args: Args) => Promise<A>
    : never;
};

/** Every query as an Effect that cannot fail. */
export type EffectQueries = {
  readonly [Name in keyof QueryTable]: QueryTable[Name] extends (
    states: States,
    ...args: infer Args
  ) => infer A
    ? (...args: Args) => Effect.Effect<A>
    : never;
};

/** Every query as a synchronous read. */
export type PromiseQueries = {
  readonly [Name in keyof QueryTable]: QueryTable[Name] extends (
    states: States,
    ...args: infer Args
  ) => infer A
    ? (...args: Args) => A
    : never;
};

/** A table entry with its argument types erased: the faces only forward them. */
type Erased<First, A> = (first: First, ...args: ReadonlyArray<unknown>) => A;

/**
 * `table` with every entry turned by `face`. The mapped type of the result
 * is the caller's to state: the entries' own types are erased in between,
 * since each face forwards arguments it never looks at.
 */
const eachEntry = <First, A, B>(
  table: Readonly<Record<string, unknown>>,
  face: (entry: Erased<First, A>) => B,
): Record<string, B> => {
  const faced: Record<string, B> = {};
  for (const [name, entry] of Object.entries(table)) {
    // Every entry of the tables takes `First` and then its own arguments.
    faced[name] = face(entry as Erased<First, A>);
  }
  return faced;
};

/** A command of the table, its argument types erased: its issue at a time, given the caller's arguments. */
export type MakeIssue = Erased<number, Issue<unknown>>;

/**
 * The command face given how a face issues a command: `issue` gets the
 * command's entry and the caller's arguments, reads its own clock (a
 * fiber's `Clock`, or the engine's for promises) and calls `make(time,
 * ...args)`. Handed over apart, not as a closure over the arguments: a
 * closure and its context per command were ~100 bytes of a one-insert
 * command's path (docs/engine.md, 2026-12-04).
 */
export const commandFace = <F>(
  issue: (make: MakeIssue, args: ReadonlyArray<unknown>) => F,
): Record<keyof CommandTable, (...args: ReadonlyArray<unknown>) => F> =>
  eachEntry<number, Issue<unknown>, (...args: ReadonlyArray<unknown>) => F>(
    commands,
    (make) =>
      (...args) =>
        issue(make, args),
  );

/** The query face given how to wrap one read of `states()`. */
export const queryFace = <F>(
  states: () => States,
  wrap: <A>(read: () => A) => F,
): Record<keyof QueryTable, (...args: ReadonlyArray<unknown>) => F> =>
  eachEntry<States, unknown, (...args: ReadonlyArray<unknown>) => F>(
    queries,
    (read) =>
      (...args) =>
        wrap(() => read(states(), ...args)),
  );
