/**
 * The error types of the value encoding; `Value.ts` re-exports each, and
 * users see them there. They live here, below both that public module and
 * the decoder that builds its errors (`valueDecode.ts`, which `Value.ts`
 * imports), so that every import points one way.
 */
import type { Utf8ErrorReason } from "./utf8.js";

/** Where in a value an encoding error sits: map keys and list indexes from the root. */
export type ValuePath = ReadonlyArray<string | number>;

/**
 * Why a value cannot be encoded. Every case is reachable from data a user
 * passes in (job args, results), so none of them throws.
 */
export type ValueEncodeError =
  | { readonly _tag: "NonFiniteNumber"; readonly path: ValuePath; readonly found: number }
  | { readonly _tag: "IntegerOutOfRange"; readonly path: ValuePath; readonly found: bigint }
  | {
      readonly _tag: "IllFormedString";
      readonly path: ValuePath;
      /** A map key rather than a string value. */
      readonly inKey: boolean;
      /** UTF-16 index of the lone surrogate. */
      readonly index: number;
    }
  | { readonly _tag: "DepthExceeded"; readonly path: ValuePath; readonly depthMax: number }
  | {
      readonly _tag: "LengthExceeded";
      readonly path: ValuePath;
      readonly length: number;
      readonly lengthMax: number;
    }
  | { readonly _tag: "UnsupportedValue"; readonly path: ValuePath; readonly found: string }
  | { readonly _tag: "Defect"; readonly message: string };

/** The closed set of canonical-form violations (FORMAT.md). */
export type NonCanonicalReason =
  | "KeyOrder"
  | "DuplicateKey"
  | "FloatIsInteger"
  | "NegativeZero"
  | "NonFiniteFloat";

/**
 * Why bytes are not exactly one canonical value. `offset` is relative to the
 * start of the decoded range: the tag, length field or byte that is wrong.
 */
export type ValueDecodeError =
  /** A fixed-size field (tag, integer, float, length) runs past the end. */
  | { readonly _tag: "UnexpectedEnd"; readonly offset: number; readonly needed: number }
  /** A length or count that the remaining bytes cannot hold. */
  | {
      readonly _tag: "LengthBeyondInput";
      readonly offset: number;
      readonly length: number;
      readonly remaining: number;
    }
  | { readonly _tag: "UnknownTag"; readonly offset: number; readonly found: number }
  | { readonly _tag: "DepthExceeded"; readonly offset: number; readonly depthMax: number }
  | { readonly _tag: "InvalidUtf8"; readonly offset: number; readonly reason: Utf8ErrorReason }
  | { readonly _tag: "NonCanonical"; readonly offset: number; readonly reason: NonCanonicalReason }
  | { readonly _tag: "TrailingBytes"; readonly offset: number; readonly count: number }
  /** An unexpected exception inside the decoder: a bug, never a verdict on the bytes. */
  | { readonly _tag: "Defect"; readonly message: string };
