/**
 * The CLI's own refusals, beside the store's and the engine's: a command
 * line that does not parse (exit 2), and a job a read command cannot find
 * (exit 1). Like every error of the library, each describes itself.
 */
import * as Data from "effect/Data";
import { Described } from "@tay/shell-node";

/** The command line is wrong: unknown command or option, missing or malformed value. */
export class UsageError extends Data.TaggedError("UsageError")<{
  /** The command it concerns, when known (for the `tay help COMMAND` hint). */
  readonly command: string | undefined;
  readonly detail: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "UsageError",
      undefined,
      this.command === undefined
        ? `${this.detail} (see tay help)`
        : `${this.detail} (see tay help ${this.command})`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** `tay job DIR ID`: the store has no such job (never inserted, or compacted away). */
export class JobNotFound extends Data.TaggedError("JobNotFound")<{
  readonly path: string;
  readonly jobId: number;
}> {
  get description(): Described.Description {
    return Described.describe(
      "JobNotFound",
      this.path,
      `no job ${this.jobId} in the current generation (never inserted, or compacted away)`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * `tay dump` printed records of one generation, then had to read the store
 * again (a writer's torn tail, a file gone) and found a newer generation:
 * a compaction replaced the one it was printing. The lines out are that
 * generation's, through `printedThrough`; the records after them were
 * folded into the new generation's snapshot, so they cannot follow.
 */
export class CompactedWhileDumped extends Data.TaggedError("CompactedWhileDumped")<{
  readonly path: string;
  readonly printedEpoch: number;
  readonly printedThrough: number;
  readonly foundEpoch: number;
}> {
  get description(): Described.Description {
    return Described.advise(
      Described.describe(
        "CompactedWhileDumped",
        this.path,
        `compacted while dump read it: the lines printed are epoch ${this.printedEpoch}'s, through this sequence; the store is at epoch ${this.foundEpoch} now`,
        { sequence: this.printedThrough },
      ),
      "dump it again",
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The CLI's own failures. */
export type CliError =
  | UsageError
  | JobNotFound
  | CompactedWhileDumped
  | ServedFailure
  | NotServed
  | BulkStopped
  | JobNotCompleted
  | WaitFailed
  | RecordNotKept;

/**
 * `tay insert --wait`: the job ended, but not completed (discarded or
 * cancelled). The job is printed first; this is the exit status's reason.
 */
export class JobNotCompleted extends Data.TaggedError("JobNotCompleted")<{
  readonly path: string;
  readonly jobId: number;
  readonly state: string;
  /** The last attempt's error, or the cancel's reason, when there is one. */
  readonly detail: string | undefined;
}> {
  get description(): Described.Description {
    const detail = this.detail === undefined ? "" : `: ${this.detail}`;
    return Described.describe(
      "JobNotCompleted",
      this.path,
      `job ${this.jobId} ended ${this.state}${detail}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** `tay insert --wait`: waiting for the job's end failed (the engine or the connection closed). */
export class WaitFailed extends Data.TaggedError("WaitFailed")<{
  readonly path: string;
  readonly jobId: number;
  readonly cause: unknown;
}> {
  get description(): Described.Description {
    return Described.describe(
      "WaitFailed",
      this.path,
      `job ${this.jobId} was inserted, but waiting for its end failed: ${this.cause instanceof Error ? this.cause.message : Described.describeUnknown(this.cause)}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * `tay retry-all` or `tay cancel-all` stopped on a failure of the store
 * (`Bulk`): the failure's own line, and that the jobs changed before it
 * stay changed (each its own durable command), so running it again
 * finishes the rest.
 */
export class BulkStopped extends Data.TaggedError("BulkStopped")<{
  readonly path: string;
  readonly cause: unknown;
}> {
  get description(): Described.Description {
    const advice = "the jobs changed before it stay changed; run the command again to do the rest";
    const cause = Described.describes(this.cause)
      ? this.cause.description
      : Described.describe("Defect", this.path, Described.describeUnknown(this.cause));
    // The cause's own advice (a repair to run) comes first.
    return Described.advise(
      cause,
      cause.advice === undefined ? advice : `${cause.advice}; ${advice}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** `tay health DIR` or `tay events DIR` on a store no server holds: what they ask is a server's. */
export class NotServed extends Data.TaggedError("NotServed")<{
  readonly path: string;
  /** What answers instead on a store at rest (default: tay verify). */
  readonly atRest?: string;
}> {
  get description(): Described.Description {
    return Described.advise(
      Described.describe("NotServed", this.path, "no server holds this store"),
      `start one with tay serve; ${this.atRest ?? "tay verify checks a store at rest"}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * A command the store's server answered with an error (the CLI went
 * through the server because another process serves the store): the
 * server's own line, its tag as the reason.
 */
export class ServedFailure extends Data.TaggedError("ServedFailure")<{
  /** The server's error tag (`Rejected`, `InvalidRequest`, `ConnectionFailed`, ...). */
  readonly reason: string;
  /** The socket it went through. */
  readonly socket: string;
  /** The server's (or the client's) one line. */
  readonly detail: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      this.reason,
      this.socket,
      `through the store's server: ${this.detail}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * A listing without an index reached a completed job whose record its lean
 * fold did not keep. Never expected: `foldForListing` checks every fact a
 * listing can reach and folds whole when one is missing; this is the
 * listing's own guard, a typed refusal rather than a job left out.
 */
export class RecordNotKept extends Data.TaggedError("RecordNotKept")<{
  /** The store listed (a directory or a URL). */
  readonly path: string | undefined;
  readonly jobId: number;
}> {
  get description(): Described.Description {
    return Described.describe(
      "RecordNotKept",
      this.path,
      `completed job ${this.jobId}: the listing's lean fold kept no record of it (a defect of tay's; nothing was changed)`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}
