/**
 * How the CLI prints a failure: the error's own line (every typed error of
 * the library describes itself, see `Described`), after `tay: `, and its
 * exit status. The CLI adds nothing to what the error says.
 *
 *   tay: <ReasonName> <path>[ at offset N][ sequence N]: <explanation>
 */
import {
  type CopyPrefix,
  Described,
  type Engine,
  type Server,
  type StoreError,
} from "@tay/shell-node";
import type { PgError } from "@tay/log-postgres";
import type { CliError } from "./CliError.js";
import type { CopyError } from "./postgres.js";

/** Everything a command can fail with. */
export type Failure =
  | CliError
  | StoreError.InitError
  | StoreError.RecoveryError
  | StoreError.StoreError
  | Engine.OpenError
  | Engine.EngineError
  | Engine.InvalidArgument
  | CopyPrefix.CopyPrefixError
  | Server.ServeError
  | PgError.PgOpenError
  | PgError.PgLogError
  | PgError.StoreExists
  | PgError.HistoryRejected<unknown>
  | CopyError;

/** Exit status: 1 for a refusal or an invalid store, 2 for a usage error. */
export type FailureExit = 1 | 2;

/** A usage error, an option or argument out of range: the command line is what is wrong. */
export const exitOf = (failure: Failure): FailureExit =>
  failure._tag === "UsageError" ||
  failure._tag === "InvalidOption" ||
  failure._tag === "InvalidArgument" ||
  failure._tag === "InvalidListen"
    ? 2
    : 1;

/** The one-line form the CLI prints: `tay: ` and the error's own line. */
export const errorLine = (failure: Described.Describes): string =>
  `tay: ${Described.line(failure.description)}`;

/** The failure as a JSON object (for `--json` output of `verify` and `copy-prefix`). */
export const errorJson = (failure: Described.Describes) => {
  const { description } = failure;
  return {
    reason: description.reason,
    path: description.path ?? null,
    offset: description.offset ?? null,
    sequence: description.sequence ?? null,
    explanation: description.explanation,
  };
};
