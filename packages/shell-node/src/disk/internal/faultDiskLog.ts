/**
 * The fault disk's operation log: what one call asks (an attempt) and what
 * became of it (an operation), kept in a bounded log the crash harness reads
 * to enumerate cut points.
 */
import type * as Disk from "../Disk.js";

/** Every operation the fault disk performs and logs (handle and lock operations included). */
export type OperationKind =
  | "open"
  | "read"
  | "write"
  | "sync"
  | "truncate"
  | "size"
  | "close"
  | "readFile"
  | "rename"
  | "link"
  | "remove"
  | "readDirectory"
  | "stat"
  | "makeDirectory"
  | "syncDirectory"
  | "lock"
  | "describe"
  | "release";

/**
 * One logged operation. `cutPoint` is present exactly on mutating operations
 * (write, sync, truncate, rename, link, remove, makeDirectory, syncDirectory,
 * describe, open with `createExclusive`): the cut point just before it. `outcome` is "ok" or
 * the error code; `powerCut` says the power was off.
 */
export interface Operation {
  /** Position in the log since the disk was made (kept when old entries are dropped). */
  readonly index: number;
  readonly kind: OperationKind;
  readonly path: string;
  /** A rename's or link's new name. */
  readonly target?: string;
  readonly mode?: Disk.OpenMode;
  readonly position?: number;
  /** Bytes asked for (read), given (write, describe), or the size set (truncate). */
  readonly length?: number;
  readonly cutPoint?: number;
  readonly outcome: "ok" | Disk.DiskErrorCode;
  readonly powerCut: boolean;
  /** Bytes actually read or written, on success. */
  readonly bytes?: number;
}

/** One call as the disk sees it before running it. */
export interface Attempt {
  readonly kind: OperationKind;
  readonly path: string;
  readonly details: {
    readonly target?: string;
    readonly mode?: Disk.OpenMode;
    readonly position?: number;
    readonly length?: number;
  };
  readonly mutating: boolean;
  /** Close and release succeed with the power off: there is nothing left to close. */
  readonly survivesPowerCut: boolean;
}

/** An attempt of `kind` on `path`; `mutating` ones are cut points. */
export const attempt = (
  kind: OperationKind,
  path: string,
  details: Attempt["details"] = {},
  mutating = false,
): Attempt => ({
  kind,
  path,
  details,
  mutating,
  survivesPowerCut: kind === "close" || kind === "release",
});

/** The `DiskOperation` a kind reports in its errors (as `NodeDisk` names them). */
export const diskOperationOf = (kind: OperationKind): Disk.DiskOperation => {
  switch (kind) {
    case "size":
      return "stat";
    case "readFile":
      return "read";
    case "describe":
      return "write";
    case "release":
      return "unlock";
    default:
      return kind;
  }
};

/** What became of an attempt, as the log records it. */
export interface Outcome {
  readonly cutPoint: number | undefined;
  readonly outcome: Operation["outcome"];
  readonly powerCut: boolean;
  readonly bytes: number | undefined;
}

/** The log, oldest first; when it outgrows `entriesMax` the oldest half is dropped. */
export class OperationLog {
  private readonly entries: Array<Operation> = [];
  private readonly entriesMax: number;
  private logged = 0;

  constructor(entriesMax: number) {
    this.entriesMax = entriesMax;
  }

  /** Appends the entry of one finished attempt. */
  record(current: Attempt, outcome: Outcome): void {
    this.entries.push({
      index: this.logged,
      kind: current.kind,
      path: current.path,
      ...current.details,
      ...(outcome.cutPoint === undefined ? {} : { cutPoint: outcome.cutPoint }),
      outcome: outcome.outcome,
      powerCut: outcome.powerCut,
      ...(outcome.bytes === undefined ? {} : { bytes: outcome.bytes }),
    });
    this.logged += 1;
    if (this.entries.length > this.entriesMax) {
      this.entries.splice(0, Math.ceil(this.entries.length / 2));
    }
  }

  /** A copy of the entries kept, oldest first. */
  snapshot(): ReadonlyArray<Operation> {
    return this.entries.slice();
  }
}
