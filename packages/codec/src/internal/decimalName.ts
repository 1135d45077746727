/**
 * The 20-digit zero-padded decimal names of FORMAT.md's directory layout:
 * segment files (`00000000000000000001.tay`) and epoch directories.
 */

/** Digits of a segment file name or epoch directory name. */
export const fileNameDigits = 20;

/**
 * Formats a 20-digit zero-padded decimal, shared by segment file names and
 * epoch directory names. Throws a `RangeError` for anything but 1..2^53-1.
 */
export const formatDecimalName = (value: number, what: string): string => {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${what} must be 1..2^53-1, not ${value}`);
  }
  return String(value).padStart(fileNameDigits, "0");
};

/**
 * Reads a 20-digit decimal (already matched by a pattern) as 1..2^53-1, or
 * undefined for 0 and for values beyond 2^53-1.
 */
export const parseDecimalName = (digits: string): number | undefined => {
  // 20 digits exceed 2^53 precision: compare as a bigint first.
  const value = BigInt(digits);
  if (value < 1n || value > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return Number(value);
};
