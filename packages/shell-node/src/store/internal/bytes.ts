/** Byte-level helpers of the store's checks. */

/** Byte-wise equality (STORE_IDs, descriptions, prefixes). */
export const equalBytes = (left: Uint8Array, right: Uint8Array): boolean => {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) {
    if (left[index] !== right[index]) return false;
  }
  return true;
};
