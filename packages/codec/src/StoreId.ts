/**
 * STORE_ID: the 16 random bytes (a UUID v4 when Tay made them) that bind a
 * marker, its pointer, manifests and segments to one store, and their
 * printed form, a lowercase 8-4-4-4-12 UUID.
 */
import * as E from "fp-ts/lib/Either.js";

/** Size of a STORE_ID in bytes. */
export const storeIdBytes = 16;

/** Length of the printed form: 32 hex digits and 4 hyphens. */
export const storeIdTextLength = 36;

/** Why a text is not a printed STORE_ID. */
export type StoreIdErrorReason = "Length" | "Hyphen" | "HexDigit";

/**
 * A text that is not a printed STORE_ID: `offset` is the first offending
 * UTF-16 position (0 for a wrong length), `found` the character there (or
 * the length, for `Length`).
 */
export interface StoreIdError {
  readonly _tag: "InvalidStoreId";
  readonly reason: StoreIdErrorReason;
  readonly offset: number;
  readonly found: string;
}

const hyphenOffsets = new Set([8, 13, 18, 23]);
const hexDigits = "0123456789abcdef";

/**
 * Prints a STORE_ID as a lowercase 8-4-4-4-12 UUID.
 *
 * Throws a `RangeError` when `id` is not 16 bytes: every STORE_ID the codec
 * hands out has that size, so another size is a programmer error.
 *
 * @example formatStoreId(Uint8Array.from({ length: 16 }, (_, i) => i))
 *   === "00010203-0405-0607-0809-0a0b0c0d0e0f"
 */
export const formatStoreId = (id: Uint8Array): string => {
  if (id.length !== storeIdBytes) {
    throw new RangeError(`a STORE_ID has ${storeIdBytes} bytes, not ${id.length}`);
  }
  let text = "";
  for (let index = 0; index < storeIdBytes; index++) {
    const byte = id[index] ?? 0;
    if (index === 4 || index === 6 || index === 8 || index === 10) text += "-";
    text += (hexDigits[byte >>> 4] ?? "") + (hexDigits[byte & 0x0f] ?? "");
  }
  return text;
};

/**
 * Parses the printed form back into 16 bytes. Only the canonical form is
 * accepted (lowercase hex, hyphens at 8, 13, 18 and 23), so parsing and
 * printing are exact inverses; the UUID version bits are not checked
 * (FORMAT.md's own test vector is not a v4 UUID).
 */
export const parseStoreId = (text: string): E.Either<StoreIdError, Uint8Array> => {
  if (text.length !== storeIdTextLength) {
    return E.left({ _tag: "InvalidStoreId", reason: "Length", offset: 0, found: `${text.length}` });
  }
  const id = new Uint8Array(storeIdBytes);
  let byteIndex = 0;
  for (let offset = 0; offset < storeIdTextLength; offset++) {
    const character = text.charAt(offset);
    if (hyphenOffsets.has(offset)) {
      if (character !== "-") {
        return E.left({ _tag: "InvalidStoreId", reason: "Hyphen", offset, found: character });
      }
      continue;
    }
    const digit = hexDigits.indexOf(character);
    if (digit < 0 || character === "") {
      return E.left({ _tag: "InvalidStoreId", reason: "HexDigit", offset, found: character });
    }
    // Two hex digits per byte: the first lands in the high nibble.
    const byte = id[byteIndex >>> 1] ?? 0;
    id[byteIndex >>> 1] = byteIndex % 2 === 0 ? digit << 4 : byte | digit;
    byteIndex++;
  }
  return E.right(id);
};
