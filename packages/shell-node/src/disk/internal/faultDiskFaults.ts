/**
 * The fault disk's injected faults: what a fault is, which attempts it
 * strikes (by kind, path and match count), and what the struck faults ask of
 * the operation.
 */
import type * as Disk from "../Disk.js";
import type { Attempt, OperationKind } from "./faultDiskLog.js";
import { normalize } from "./faultDiskPaths.js";

/** Which paths a fault applies to: an exact path (normalized), a pattern or a predicate. */
export type FaultPath = string | RegExp | ((path: string) => boolean);

/**
 * Where a fault strikes: operations matching `path` (all when absent); only
 * the `nth` match (1-based) when given, else every match.
 */
export interface FaultScope {
  readonly path?: FaultPath;
  readonly nth?: number;
}

/**
 * An injected fault:
 * - `Fail`: the operation fails with `code` and changes nothing;
 * - `ShortWrite`: a write stores and reports at most `bytesMax` bytes;
 * - `LoseDirtyPages`: fsyncgate: a file `sync` drops the unsynced changes
 *   (volatile contents revert to durable) and fails with EIO; a later sync
 *   succeeds with nothing left to write.
 */
export type Fault =
  | ({
      readonly _tag: "Fail";
      readonly operation: OperationKind;
      readonly code: Disk.DiskErrorCode;
    } & FaultScope)
  | ({ readonly _tag: "ShortWrite"; readonly bytesMax: number } & FaultScope)
  | ({ readonly _tag: "LoseDirtyPages" } & FaultScope);

/** What the matching faults ask of the operation beyond failing it. */
export interface Injected {
  readonly shortWriteBytesMax: number | undefined;
  readonly loseDirtyPages: boolean;
}

/** What an operation without a striking fault is asked: nothing. */
export const injectedNothing: Injected = { shortWriteBytesMax: undefined, loseDirtyPages: false };

const faultKindMatches = (fault: Fault, kind: OperationKind): boolean => {
  switch (fault._tag) {
    case "Fail":
      return fault.operation === kind;
    case "ShortWrite":
      return kind === "write";
    case "LoseDirtyPages":
      return kind === "sync";
    default: {
      const unreachable: never = fault;
      return unreachable;
    }
  }
};

const faultPathMatches = (
  path: FaultPath | undefined,
  candidates: ReadonlyArray<string>,
): boolean => {
  if (path === undefined) return true;
  return candidates.some((candidate) => {
    if (typeof path === "string") return normalize(path) === candidate;
    if (path instanceof RegExp) return path.test(candidate);
    return path(candidate);
  });
};

/** The first `Fail` among the struck faults: the operation fails with its code. */
export const failureOf = (
  struck: ReadonlyArray<Fault>,
): Extract<Fault, { readonly _tag: "Fail" }> | undefined => {
  for (const fault of struck) if (fault._tag === "Fail") return fault;
  return undefined;
};

/** The struck faults other than `Fail`, combined: the shortest short write, any fsyncgate. */
export const injectedBy = (struck: ReadonlyArray<Fault>): Injected => {
  let shortWriteBytesMax: number | undefined;
  for (const fault of struck) {
    if (fault._tag === "ShortWrite") {
      shortWriteBytesMax = Math.min(shortWriteBytesMax ?? fault.bytesMax, fault.bytesMax);
    }
  }
  const loseDirtyPages = struck.some((fault) => fault._tag === "LoseDirtyPages");
  return { shortWriteBytesMax, loseDirtyPages };
};

/** The faults armed on one disk, each counting the attempts it matched. */
export class ArmedFaults {
  private readonly armed: Array<{ readonly fault: Fault; matches: number }> = [];

  /** Arms `fault` from now on; throws a `RangeError` on a short write of no bytes. */
  inject(fault: Fault): void {
    if (
      fault._tag === "ShortWrite" &&
      !(Number.isSafeInteger(fault.bytesMax) && fault.bytesMax >= 1)
    ) {
      // A zero-byte write would make every correct write loop spin forever.
      throw new RangeError(
        `shortWrite: bytesMax must be a positive integer, got ${fault.bytesMax}`,
      );
    }
    this.armed.push({ fault, matches: 0 });
  }

  /** Disarms every fault. */
  clear(): void {
    this.armed.length = 0;
  }

  /** The faults striking this attempt; each fault counts its own matches. */
  strike(current: Attempt): ReadonlyArray<Fault> {
    const candidates =
      current.details.target === undefined
        ? [current.path]
        : [current.path, current.details.target];
    const struck: Array<Fault> = [];
    for (const entry of this.armed) {
      if (!faultKindMatches(entry.fault, current.kind)) continue;
      if (!faultPathMatches(entry.fault.path, candidates)) continue;
      entry.matches += 1;
      if (entry.fault.nth === undefined || entry.fault.nth === entry.matches) {
        struck.push(entry.fault);
      }
    }
    return struck;
  }
}
