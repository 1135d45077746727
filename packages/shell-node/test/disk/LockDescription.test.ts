// Proves LOCK's description round-trips and that parsing untrusted contents never throws: any
// bytes give a holder or a typed LockDescriptionError. Worked examples and a fast-check property.
import { Either } from "effect";
import { describe, expect, it } from "@effect/vitest";
import * as fc from "fast-check";
import * as LockDescription from "../../src/disk/LockDescription.js";

const holder: LockDescription.LockHolder = {
  pid: 4242,
  host: "worker-1",
  session: "00112233445566778899aabbccddeeff",
  acquiredAt: 1_796_000_000_000,
};

describe("LockDescription", () => {
  it("round-trips a holder as one line of JSON", () => {
    const bytes = LockDescription.encode(holder);
    expect(new TextDecoder().decode(bytes).endsWith("}\n")).toBe(true);
    expect(LockDescription.decode(bytes)).toEqual(Either.right(holder));
  });

  it("refuses oversized, non-UTF-8, non-JSON and misshapen contents", () => {
    const reason = (bytes: Uint8Array) => {
      const decoded = LockDescription.decode(bytes);
      return Either.isLeft(decoded) ? decoded.left.reason : "Holder";
    };
    const text = (value: string) => new TextEncoder().encode(value);
    expect(reason(new Uint8Array(LockDescription.descriptionBytesMax + 1))).toBe("TooLarge");
    expect(reason(new Uint8Array([0xff, 0xfe]))).toBe("NotUtf8");
    expect(reason(text("{"))).toBe("NotJson");
    expect(reason(text("[]"))).toBe("Shape");
    expect(reason(text('{"pid":"1","host":"h","session":"s","acquiredAt":0}'))).toBe("Shape");
    expect(reason(text('{"pid":1.5,"host":"h","session":"s","acquiredAt":0}'))).toBe("Shape");
    expect(reason(text('{"pid":1,"host":2,"session":"s","acquiredAt":0}'))).toBe("Shape");
    expect(reason(text('{"pid":1,"host":"h","session":null,"acquiredAt":0}'))).toBe("Shape");
    expect(reason(text('{"pid":1,"host":"h","session":"s","acquiredAt":0.5}'))).toBe("Shape");
    expect(reason(text('{"__proto__":{"pid":1},"host":"h","session":"s","acquiredAt":0}'))).toBe(
      "Shape",
    );
  });

  it("reads a description of exactly descriptionBytesMax bytes", () => {
    const shortest = LockDescription.encode({ ...holder, host: "" }).length;
    const longest = {
      ...holder,
      host: "h".repeat(LockDescription.descriptionBytesMax - shortest),
    };
    const bytes = LockDescription.encode(longest);
    expect(bytes.length).toBe(LockDescription.descriptionBytesMax);
    expect(LockDescription.decode(bytes)).toEqual(Either.right(longest));
  });

  it("never throws, for any bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const decoded = LockDescription.decode(bytes);
        expect(decoded._tag === "Left" || decoded._tag === "Right").toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
