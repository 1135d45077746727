/**
 * The last check of every copy (`tay copy` both ways, the import under
 * `copy-prefix`): the copy, read back from where it was written, must end
 * at the sequence its source ends at and fold to the state its source folds
 * to. One comparison for the three, so each says the same thing in the
 * same words when a copy does not hold what its source holds (a disk that
 * lost or changed what it acknowledged, or a bug in the copy's writer).
 */
import { State } from "@tay/core";

/** One side of the comparison: where it ends and what it folds to (undefined: it did not fold). */
export interface CopySide {
  readonly lastSequence: number;
  readonly state: State.State | undefined;
  /** Why it did not fold, when it did not and the caller knows. */
  readonly refusal?: string;
}

/** What the two sides are called in the message ("the written store", "the history"). */
export interface CopyNames {
  readonly copy: string;
  readonly source: string;
}

/** Why a copy ending at `copy` does not end where its source does, or undefined when it does. */
export const endMismatch = (copy: number, source: number, names: CopyNames): string | undefined =>
  copy === source
    ? undefined
    : `${names.copy} ends at sequence ${copy}, ${names.source} at ${source}`;

/** Why `copy` does not hold what `source` holds, or undefined when it does. */
export const copyMismatch = (
  copy: CopySide,
  source: CopySide,
  names: CopyNames,
): string | undefined => {
  const end = endMismatch(copy.lastSequence, source.lastSequence, names);
  if (end !== undefined) return end;
  if (copy.state === undefined) return `${names.copy} does not fold${because(copy)}`;
  if (source.state === undefined) return `${names.source} does not fold${because(source)}`;
  return State.equals(copy.state, source.state)
    ? undefined
    : `${names.copy} folds to another state than ${names.source}`;
};

const because = (side: CopySide): string => (side.refusal === undefined ? "" : `: ${side.refusal}`);
