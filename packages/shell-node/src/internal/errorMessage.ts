/**
 * The `message` of every typed error of this package: the line the CLI
 * prints for it (`<Reason> <path>[ at offset N][ sequence N]:
 * <explanation>`), so a program that only logs `error.message` (or lets
 * Node print the error) still reads the file, offset, sequence and reason.
 */
import { describe, describedLine, type Failure } from "../cli/describe.js";

export const messageOf = (failure: Failure): string => {
  try {
    return describedLine(describe(failure, undefined));
  } catch {
    // An error built with fields the describer does not expect: its tag
    // still says what it is, and a getter must never throw.
    return failure._tag;
  }
};
