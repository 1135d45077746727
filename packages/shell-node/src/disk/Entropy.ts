/**
 * The store's source of randomness: STORE_IDs and lock session ids.
 *
 * A `Context.Reference` with the operating system's CSPRNG as its default,
 * so production code needs no layer while tests swap in `seeded(n)` and get
 * the same ids on every run.
 */
import { randomFillSync } from "node:crypto";
import * as Context from "effect/Context";
import * as Effect from "effect/Effect";

/** Where random bytes come from. */
export interface EntropyService {
  /** `length` random bytes. */
  readonly bytes: (length: number) => Effect.Effect<Uint8Array>;
}

/** The operating system's CSPRNG (`crypto.randomFillSync`). */
export const system: EntropyService = {
  bytes: (length) => Effect.sync(() => randomFillSync(new Uint8Array(length))),
};

/**
 * A deterministic generator for tests (xorshift32 from `seed`): never use it
 * for a real store, its STORE_IDs are predictable by design.
 */
export const seeded = (seed: number): EntropyService => {
  // xorshift32 must not start at 0, or it stays there.
  let state = seed >>> 0 || 0x9e3779b9;
  const next = (): number => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
  return {
    bytes: (length) => Effect.sync(() => Uint8Array.from({ length }, () => next() & 0xff)),
  };
};

/** The service tag; defaults to `system`. */
export class Entropy extends Context.Reference<Entropy>()("@tay/shell-node/Entropy", {
  defaultValue: (): EntropyService => system,
}) {}

/**
 * A fresh STORE_ID: 16 random bytes with the UUID v4 version and variant
 * bits set (FORMAT.md: "16 random bytes (a UUID v4)").
 */
export const storeId: Effect.Effect<Uint8Array> = Effect.gen(function* () {
  const entropy = yield* Entropy;
  const id = yield* entropy.bytes(16);
  // Version 4 in the high nibble of byte 6, variant 10xx in byte 8 (RFC 9562).
  id[6] = ((id[6] ?? 0) & 0x0f) | 0x40;
  id[8] = ((id[8] ?? 0) & 0x3f) | 0x80;
  return id;
});

/** A lock session id: 16 random bytes as 32 lowercase hex digits. */
export const sessionId: Effect.Effect<string> = Effect.gen(function* () {
  const entropy = yield* Entropy;
  const bytes = yield* entropy.bytes(16);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
});
