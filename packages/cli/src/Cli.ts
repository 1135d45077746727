/**
 * The `tay` command line: `init`, `status`, `verify`, `dump`, `jobs`,
 * `job`, `schedules`, `queues`, `compact`, `insert`, `schedule`, `cancel`,
 * `retry`, `cancel-schedule`, `copy-prefix`, `copy`, `demo`, `serve` and `health` (docs/cli.md has
 * them all); most take a `postgres://` URL in place of DIR (`takesUrl`).
 *
 * `run` parses an argument vector with `node:util`'s `parseArgs`, runs the
 * command's program and returns the exit status: 0 success, 1 a refusal
 * (invalid store, lock held, rejected command, failed syscall), 2 a usage
 * error, 130 a demo stopped by SIGINT. Every failure is printed as ONE line
 * on standard error:
 *
 *   tay: <ReasonName> <path>[ at offset N][ sequence N]: <explanation>
 *
 * and never as a stack trace (`--debug` adds the cause after the line).
 */
import { parseArgs } from "node:util";
import * as Cause from "effect/Cause";
import * as Effect from "effect/Effect";
import * as Option from "effect/Option";
import { UsageError } from "./CliError.js";
import { type Command, exitCodes, type Input } from "./command.js";
import { demo } from "./demo.js";
import { events } from "./events.js";
import { health } from "./health.js";
import { errorLine, exitOf, type Failure } from "./describe.js";
import * as Bulk from "./bulk.js";
import * as QueueState from "./queueState.js";
import * as Read from "./read.js";
import { copy } from "./copy.js";
import { isUrl } from "./postgres.js";
import { copyPrefix } from "./repair.js";
import { serve } from "./serve.js";
import { Terminal } from "./Terminal.js";
import * as Write from "./write.js";
import type { Disk } from "@tay/shell-node";

// The pieces an embedding program needs to run the CLI and print its errors.
export { errorLine, type Failure } from "./describe.js";
export { exitCodes } from "./command.js";
export { Terminal, type TerminalService } from "./Terminal.js";

/** Every command, in the order help lists them. */
export const commands: ReadonlyArray<Command> = [
  Write.init,
  Read.status,
  Read.verify,
  Read.dump,
  Read.jobs,
  Read.job,
  Read.schedules,
  Read.queues,
  Write.compact,
  Write.insert,
  Write.schedule,
  Write.cancel,
  Write.retry,
  Write.cancelSchedule,
  QueueState.pause,
  QueueState.resume,
  QueueState.limit,
  Bulk.retryAll,
  Bulk.cancelAll,
  copyPrefix,
  copy,
  demo,
  serve,
  health,
  events,
];

/** The commands that take a `postgres://` URL where they take DIR (docs/postgres.md, "The CLI"). */
export const takesUrl: ReadonlySet<string> = new Set([
  "init",
  "status",
  "verify",
  "dump",
  "jobs",
  "job",
  "schedules",
  "queues",
  "insert",
  "schedule",
  "cancel",
  "retry",
  "cancel-schedule",
  "pause",
  "resume",
  "limit",
  "retry-all",
  "cancel-all",
  "compact",
  "copy",
  "demo",
  "serve",
]);

/**
 * Why each command that takes only directories refuses a URL (every
 * command not in `takesUrl` has its reason here: `test/CliUrl.test.ts`).
 */
export const urlRefusals: ReadonlyMap<string, string> = new Map([
  [
    "health",
    "it asks the server that a directory's LOCK names; a server of a PostgreSQL store answers GET /v1/health on its own socket or port",
  ],
  [
    "events",
    "it follows the server that a directory's LOCK names; a server of a PostgreSQL store streams GET /v1/events on its own socket or port",
  ],
  [
    "copy-prefix",
    "it repairs a directory whose segment files were cut short or damaged; a PostgreSQL store commits whole transactions, so it has no torn or corrupt tail to leave out (tay verify checks one, tay copy moves one)",
  ],
]);

/** The one-line refusal of a URL given to `command`, which takes only directories. */
const urlRefusal = (command: string): string =>
  `${command} takes a directory, not a PostgreSQL URL: ${urlRefusals.get(command) ?? "it works on files"}`;

/** Options every command accepts. */
const commonOptions = {
  json: { type: "boolean" },
  debug: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const commandNamed = (name: string | undefined): Command | undefined =>
  commands.find((command) => command.name === name);

/**
 * What SIGINT does while `argv`'s command runs:
 * - `graceful`: the command listens (`Terminal.interrupted`) and stops
 *   cleanly (the demo);
 * - `deferred`: the command writes; it finishes (milliseconds) and the
 *   process then exits 130, so a signal never cuts a write in half;
 * - `immediate`: a read-only command; the process exits 130 at once.
 */
export type InterruptPolicy = "graceful" | "deferred" | "immediate";

const readOnly: ReadonlyArray<string> = [
  "status",
  "verify",
  "dump",
  "jobs",
  "job",
  "schedules",
  "queues",
  "health",
  "events",
];

/** The interrupt policy of the command `argv` names (see `InterruptPolicy`). */
export const interruptPolicy = (argv: ReadonlyArray<string>): InterruptPolicy => {
  const name = argv[0];
  // `insert --wait` hears SIGINT only while it waits, after its insert.
  if (name === "demo" || name === "serve" || (name === "insert" && argv.includes("--wait"))) {
    return "graceful";
  }
  if (name === undefined || readOnly.includes(name) || commandNamed(name) === undefined) {
    return "immediate";
  }
  return "deferred";
};

const optionLine = (option: Command["options"][number]): string => {
  const flag = option.value === undefined ? `--${option.name}` : `--${option.name} ${option.value}`;
  return `  ${flag.padEnd(28)} ${option.help}`;
};

/** Help for one command. */
export const commandHelp = (command: Command): string =>
  [
    `usage: tay ${command.name} ${command.synopsis}`,
    "",
    command.summary,
    ...(command.options.length === 0 ? [] : ["", "options:", ...command.options.map(optionLine)]),
    "",
    "common options:",
    optionLine({
      name: "json",
      type: "boolean",
      help: "machine-readable output (one JSON document)",
    }),
    optionLine({ name: "debug", type: "boolean", help: "after an error line, print its cause" }),
    optionLine({ name: "help", type: "boolean", help: "this help" }),
  ].join("\n");

/** The overview `tay help` prints. */
export const overview = (): string =>
  [
    "usage: tay COMMAND ARGS... [--json] [--debug]",
    "",
    "commands:",
    ...commands.map((command) => `  ${command.name.padEnd(16)} ${command.summary}`),
    "",
    "tay help COMMAND (or tay COMMAND --help) describes a command.",
    "exit status: 0 success, 1 refused or invalid, 2 usage error, 130 interrupted demo.",
  ].join("\n");

/**
 * Takes node's parseArgs message down to its first sentence; for a value
 * that starts with a dash (`--priority -1`, `--args -5`), which parseArgs
 * calls ambiguous, with the spelling that passes it.
 */
const parseMessage = (cause: unknown): string => {
  const message = cause instanceof Error ? cause.message : String(cause);
  const first = message.split(/\.\s/)[0] ?? message;
  const dashed = /^Option '(--[a-z-]+)' argument is ambiguous/.exec(first);
  return dashed === null
    ? first
    : `${first}: a value starting with a dash is written ${dashed[1]}=VALUE`;
};

/** Parses the arguments after the command name. */
const parse = (command: Command, args: ReadonlyArray<string>) =>
  Effect.try({
    try: () => {
      const options: Record<string, { type: "string" | "boolean"; short?: string }> = {
        ...commonOptions,
      };
      for (const option of command.options) options[option.name] = { type: option.type };
      return parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
    },
    catch: (cause) => new UsageError({ command: command.name, detail: parseMessage(cause) }),
  });

/** Runs the command `argv` names; fails with its failure, succeeds with its exit status. */
const dispatch = (
  argv: ReadonlyArray<string>,
  context: { directory: string | undefined },
): Effect.Effect<number, Failure, Disk.Disk | Terminal> =>
  Effect.gen(function* () {
    const terminal = yield* Terminal;
    const [name, ...rest] = argv;
    if (name === undefined) {
      return yield* new UsageError({ command: undefined, detail: "missing command" });
    }
    if (name === "help" || name === "--help" || name === "-h") {
      const topic = commandNamed(rest[0]);
      if (rest[0] !== undefined && topic === undefined) {
        return yield* new UsageError({
          command: undefined,
          detail: `unknown command ${JSON.stringify(rest[0])}`,
        });
      }
      yield* terminal.out(`${topic === undefined ? overview() : commandHelp(topic)}\n`);
      return exitCodes.ok;
    }
    const command = commandNamed(name);
    if (command === undefined) {
      return yield* new UsageError({
        command: undefined,
        detail: `unknown command ${JSON.stringify(name)}`,
      });
    }
    const parsed = yield* parse(command, rest);
    if (parsed.values.help === true) {
      yield* terminal.out(`${commandHelp(command)}\n`);
      return exitCodes.ok;
    }
    const { positionals } = parsed;
    if (positionals.length !== command.arguments.length) {
      const expected = command.arguments.join(" ");
      return yield* new UsageError({
        command: command.name,
        detail:
          positionals.length < command.arguments.length
            ? `missing ${command.arguments.slice(positionals.length).join(" ")} (expected ${expected})`
            : `unexpected argument ${JSON.stringify(positionals[command.arguments.length])} (expected ${expected})`,
      });
    }
    // Any argument, not only the first: `copy-prefix DIR URL` is refused too.
    if (!takesUrl.has(command.name) && positionals.some(isUrl)) {
      return yield* new UsageError({ command: command.name, detail: urlRefusal(command.name) });
    }
    // The first argument names the store for failures that carry no path.
    context.directory = positionals[0];
    const values: Record<string, string | boolean | undefined> = {};
    for (const [key, value] of Object.entries(parsed.values)) {
      if (typeof value === "string" || typeof value === "boolean") values[key] = value;
    }
    const input: Input = {
      command: command.name,
      positionals,
      values,
      json: values.json === true,
    };
    return yield* command.run(input);
  });

/**
 * Runs `tay` with `argv` (the arguments after the program name) and
 * returns the exit status; never fails. Failures are printed as one line on
 * the terminal's error stream; defects too (`Defect`), with the cause after
 * the line only under `--debug`.
 *
 * @example
 *   const status = yield* Cli.run(["status", "/var/lib/tay", "--json"]);
 */
export const run = (
  argv: ReadonlyArray<string>,
): Effect.Effect<number, never, Disk.Disk | Terminal> =>
  Effect.gen(function* () {
    const terminal = yield* Terminal;
    const debug = argv.includes("--debug");
    const context: { directory: string | undefined } = { directory: undefined };
    return yield* dispatch(argv, context).pipe(
      Effect.catchAllCause((cause) =>
        Effect.gen(function* () {
          const failure = Cause.failureOption(cause);
          if (Option.isSome(failure)) {
            yield* terminal.err(`${errorLine(failure.value)}\n`);
            if (debug) yield* terminal.err(`${Cause.pretty(cause)}\n`);
            return exitOf(failure.value);
          }
          if (Cause.isInterruptedOnly(cause)) return exitCodes.interrupted;
          const squashed = Cause.squash(cause);
          const message = squashed instanceof Error ? squashed.message : String(squashed);
          const path = context.directory === undefined ? "" : ` ${context.directory}`;
          yield* terminal.err(`tay: Defect${path}: ${message.replace(/\s*[\r\n]+\s*/g, " ")}\n`);
          if (debug) yield* terminal.err(`${Cause.pretty(cause)}\n`);
          return exitCodes.failure;
        }),
      ),
    );
  });
