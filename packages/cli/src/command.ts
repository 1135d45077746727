/**
 * What a command is (its synopsis, arguments, options and program) and the
 * accessors its program reads the parsed command line with. Every accessor
 * fails with a `UsageError` naming the command, so a malformed value exits
 * 2 with one line.
 */
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type { Disk } from "@tay/shell-node";
import { UsageError } from "./CliError.js";
import type { Failure } from "./describe.js";
import type { Terminal } from "./Terminal.js";

/** Exit statuses. */
export const exitCodes = {
  ok: 0,
  /** A refusal: invalid store, locked, rejected command, failed syscall. */
  failure: 1,
  /** The command line is wrong. */
  usage: 2,
  /** The demo was stopped with SIGINT (128 + 2, the shell's convention). */
  interrupted: 130,
} as const;

/** One option of a command. */
export interface OptionSpec {
  readonly name: string;
  readonly type: "string" | "boolean";
  /** The placeholder in help (`N`, `Q`, `TIME`); omitted for booleans. */
  readonly value?: string;
  readonly help: string;
}

/** A parsed command line, as a command's program receives it. */
export interface Input {
  readonly command: string;
  readonly positionals: ReadonlyArray<string>;
  readonly values: { readonly [name: string]: string | boolean | undefined };
  /** `--json`: machine-readable output. */
  readonly json: boolean;
}

/** A command of `tay`. */
export interface Command {
  readonly name: string;
  /** Arguments and options, as help prints them after `tay NAME`. */
  readonly synopsis: string;
  readonly summary: string;
  /** Names of the required positional arguments, in order (`DIR`, `ID`). */
  readonly arguments: ReadonlyArray<string>;
  readonly options: ReadonlyArray<OptionSpec>;
  /** The program: its exit status, or a failure to print as one line. */
  readonly run: (input: Input) => Effect.Effect<number, Failure, Disk.Disk | Terminal>;
}

/** A usage error for `input`'s command. */
export const usage = (input: Input, detail: string): UsageError =>
  new UsageError({ command: input.command, detail });

/** The positional argument at `index` (present: the parser checked the count). */
export const argument = (input: Input, index: number): string => input.positionals[index] ?? "";

/** A string option, or undefined when absent. */
export const text = (input: Input, name: string): string | undefined => {
  const value = input.values[name];
  return typeof value === "string" ? value : undefined;
};

/** A boolean option. */
export const flag = (input: Input, name: string): boolean => input.values[name] === true;

/** A required string option. */
export const required = (input: Input, name: string): Effect.Effect<string, UsageError> => {
  const value = text(input, name);
  return value === undefined
    ? Effect.fail(usage(input, `--${name} is required`))
    : Effect.succeed(value);
};

/** An option parsed by `parse`, or undefined when absent. */
export const parsed = <A>(
  input: Input,
  name: string,
  parse: (text: string) => Either.Either<A, string>,
): Effect.Effect<A | undefined, UsageError> => {
  const value = text(input, name);
  if (value === undefined) return Effect.succeed(undefined);
  const result = parse(value);
  return Either.isLeft(result)
    ? Effect.fail(usage(input, `--${name}: ${result.left}`))
    : Effect.succeed(result.right);
};

/** A required option parsed by `parse`. */
export const requiredParsed = <A>(
  input: Input,
  name: string,
  parse: (text: string) => Either.Either<A, string>,
): Effect.Effect<A, UsageError> =>
  Effect.flatMap(parsed(input, name, parse), (value) =>
    value === undefined
      ? Effect.fail(usage(input, `--${name} is required`))
      : Effect.succeed(value),
  );

/** A positional argument parsed by `parse`. */
export const parsedArgument = <A>(
  input: Input,
  index: number,
  label: string,
  parse: (text: string) => Either.Either<A, string>,
): Effect.Effect<A, UsageError> => {
  const result = parse(argument(input, index));
  return Either.isLeft(result)
    ? Effect.fail(usage(input, `${label}: ${result.left}`))
    : Effect.succeed(result.right);
};
