/**
 * Where the CLI writes and how it learns that the user wants it to stop:
 * standard output and error, whether output is a terminal (the demo's live
 * progress line), and the SIGINT signal as an effect to wait on.
 *
 * A service, so the command programs never touch `process` themselves: only
 * `main.ts` binds it to the process.
 */
import * as Context from "effect/Context";
import * as Effect from "effect/Effect";

/** The process's streams and SIGINT, as the command programs see them. */
export interface TerminalService {
  /** Writes `text` to standard output as it is (no newline added); ends once the output took it (waiting while its buffer is full). */
  readonly out: (text: string) => Effect.Effect<void>;
  /** Writes `text` to standard error as it is. */
  readonly err: (text: string) => Effect.Effect<void>;
  /** Standard output is a terminal: carriage-return updates are safe. */
  readonly isTerminal: boolean;
  /** Resolves once the user asked the command to stop (SIGINT). */
  readonly interrupted: Effect.Effect<void>;
  /** True once the user asked the command to stop. */
  readonly wasInterrupted: Effect.Effect<boolean>;
}

/** The terminal as an Effect service (bound to the process by `main.ts`). */
export class Terminal extends Context.Tag("@tay/shell-node/cli/Terminal")<
  Terminal,
  TerminalService
>() {}

/** Writes a line (a newline is appended). */
export const line = (text: string): Effect.Effect<void, never, Terminal> =>
  Effect.flatMap(Terminal, (terminal) => terminal.out(`${text}\n`));

/** Writes several lines. */
export const lines = (texts: ReadonlyArray<string>): Effect.Effect<void, never, Terminal> =>
  texts.length === 0 ? Effect.void : line(texts.join("\n"));
