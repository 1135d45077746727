/**
 * The CLI's own refusals, beside the store's and the engine's: a command
 * line that does not parse (exit 2), and a job a read command cannot find
 * (exit 1).
 */
import { Data } from "effect";

/** The command line is wrong: unknown command or option, missing or malformed value. */
export class UsageError extends Data.TaggedError("UsageError")<{
  /** The command it concerns, when known (for the `tay help COMMAND` hint). */
  readonly command: string | undefined;
  readonly detail: string;
}> {}

/** `tay job DIR ID`: the store has no such job (never inserted, or compacted away). */
export class JobNotFound extends Data.TaggedError("JobNotFound")<{
  readonly path: string;
  readonly jobId: number;
}> {}

/** The CLI's own failures. */
export type CliError = UsageError | JobNotFound;
