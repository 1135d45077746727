// LOCK's optional `server` field: a holder description written before the field still decodes,
// one with it round-trips, and a malformed field is refused as a wrong shape (never half-read).
import { Either } from "effect";
import { describe, expect, it } from "vitest";
import * as LockDescription from "../../src/disk/LockDescription.js";

const holder = { pid: 7, host: "box", session: "ab".repeat(16), acquiredAt: 1 };
const bytes = (text: string) => new TextEncoder().encode(text);

describe("LockDescription server field", () => {
  it("reads a LOCK written before the field", () => {
    expect(LockDescription.decode(bytes(JSON.stringify(holder)))).toEqual(Either.right(holder));
  });

  it("round-trips the socket and the TCP address", () => {
    const served = { ...holder, server: { socket: "/d/tay.sock", listen: "127.0.0.1:7070" } };
    expect(LockDescription.decode(LockDescription.encode(served))).toEqual(Either.right(served));
    const local = { ...holder, server: { socket: "/d/tay.sock" } };
    expect(LockDescription.decode(LockDescription.encode(local))).toEqual(Either.right(local));
  });

  it("refuses a server field of the wrong shape", () => {
    for (const server of [3, { socket: 1 }, { socket: "/s", listen: 9 }]) {
      const decoded = LockDescription.decode(bytes(JSON.stringify({ ...holder, server })));
      expect(decoded).toEqual(Either.left({ _tag: "LockDescriptionError", reason: "Shape" }));
    }
  });
});
