// Proves the portable CRC-32C (slicing-by-8) computes what fast-crc32c does,
// and that the codec picks it, without configuration, where fast-crc32c
// cannot load: FORMAT.md's test vectors, a property against the native
// binding, the load-time probe against broken candidates, and an esbuild
// `--platform=browser` bundle of @tay/codec run in a context with no
// `require`, `Buffer` or `process`.
import { fileURLToPath } from "node:url";
import { runInNewContext } from "node:vm";
import { build } from "esbuild";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { crc32c, crc32cImplementation } from "../src/Crc32c.js";
import { type Crc32cFunction, ifUsable, viaFastCrc32c } from "../src/internal/crc32cNative.js";
import { crc32cSlicing } from "../src/internal/crc32cSlicing.js";

const hex = (text: string): Uint8Array =>
  Uint8Array.from(text.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));

const u32At = (bytes: Uint8Array, offset: number): number =>
  new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(offset);

/** FORMAT.md's test vectors that end in a CRC of every byte before it. */
const vectors: ReadonlyArray<readonly [string, string]> = [
  ["CURRENT, epoch 1", "5441594301000000000102030405060708090a0b0c0d0e0f00000000000000017e613694"],
  [
    "segment header, ID 1, first sequence 1",
    "544159530100000000000000000000010000000000000001000102030405060708090a0b0c0d0e0fac6a89d0",
  ],
];

/** FORMAT.md's record vector: header CRC at 20 over 0..19, record CRC at the end. */
const recordVector = hex(
  "54415900010100010000000000000001000000a5d35091c108000000080000000461726773000000000b696e7365727465645f6174030000000000000000000000066a6f625f69640300000000000000010000000c6d61785f617474656d707473030000000000000001000000087072696f72697479030000000000000000000000057175657565050000000764656661756c740000000c7363686564756c65645f617403000000000000000000000006776f726b657205000000015794d8a272",
);

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

describe("the portable CRC-32C", () => {
  it("has FORMAT.md's check value and is 0 for no bytes", () => {
    expect(crc32cSlicing(ascii("123456789"), 0)).toBe(0xe306_9283);
    expect(crc32cSlicing(new Uint8Array(), 0)).toBe(0);
    expect(crc32cSlicing(new Uint8Array(), 0xdead_beef)).toBe(0xdead_beef);
  });

  it.each(vectors)("reproduces the CRC that ends FORMAT.md's %s vector", (_name, text) => {
    const bytes = hex(text);
    const end = bytes.length - 4;
    expect(crc32cSlicing(bytes.subarray(0, end), 0)).toBe(u32At(bytes, end));
  });

  it("reproduces the header CRC and the record CRC of FORMAT.md's record vector", () => {
    const header = crc32cSlicing(recordVector.subarray(0, 20), 0);
    expect(header).toBe(u32At(recordVector, 20));
    const end = recordVector.length - 4;
    expect(crc32cSlicing(recordVector.subarray(24, end), header)).toBe(u32At(recordVector, end));
  });

  it("agrees with fast-crc32c's native binding on any bytes, view and continuation", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 600 }),
        fc.nat(),
        fc.nat(),
        fc.nat({ max: 0xffff_ffff }),
        (buffer, a, b, initial) => {
          const start = a % (buffer.length + 1);
          const end = start + (b % (buffer.length - start + 1));
          const view = buffer.subarray(start, end);
          expect(crc32cSlicing(view, initial)).toBe(viaFastCrc32c(view, initial));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("continues its own results at every split", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.nat(), (bytes, cut) => {
        const at = cut % (bytes.length + 1);
        const first = crc32cSlicing(bytes.subarray(0, at), 0);
        expect(crc32cSlicing(bytes.subarray(at), first)).toBe(crc32cSlicing(bytes, 0));
      }),
    );
  });
});

describe("choosing an implementation", () => {
  it("takes fast-crc32c's native binding on Node, where it built", () => {
    expect(crc32cImplementation).toBe("native");
    expect(crc32c(ascii("123456789"))).toBe(0xe306_9283);
  });

  it("accepts the portable implementation and fast-crc32c's binding", () => {
    expect(ifUsable(crc32cSlicing)).toBe(crc32cSlicing);
    expect(ifUsable(viaFastCrc32c)).toBe(viaFastCrc32c);
  });

  it("refuses a candidate that throws, as fast-crc32c does when nothing of it loaded", () => {
    const unavailable: Crc32cFunction = () => {
      throw new Error("no CRC-32C implementation is available");
    };
    expect(ifUsable(unavailable)).toBeNull();
  });

  it("refuses a candidate that ignores `initial` or a view's byteOffset", () => {
    const ignoresInitial: Crc32cFunction = (bytes) => crc32cSlicing(bytes, 0);
    const ignoresOffset: Crc32cFunction = (bytes, initial) =>
      crc32cSlicing(new Uint8Array(bytes.buffer, 0, bytes.length), initial);
    expect(ifUsable(ignoresInitial)).toBeNull();
    expect(ifUsable(ignoresOffset)).toBeNull();
  });
});

const source = (file: string): string => fileURLToPath(new URL(`../../${file}`, import.meta.url));

describe("a browser bundle of @tay/codec", () => {
  it("builds without a warning and computes CRCs with no Node globals", async () => {
    const bundle = await build({
      stdin: {
        contents: `import { crc32c, crc32cImplementation } from "@tay/codec";
          globalThis.result = { implementation: crc32cImplementation,
            check: crc32c(new TextEncoder().encode("123456789")) };`,
        resolveDir: source("codec"),
      },
      bundle: true,
      platform: "browser",
      format: "iife",
      write: false,
      logLevel: "silent",
      alias: {
        "@tay/codec": source("codec/src/index.ts"),
        "@tay/core": source("core/src/index.ts"),
      },
    });
    expect(bundle.warnings).toEqual([]);
    const code = bundle.outputFiles[0]?.text ?? "";
    // A fresh context: no require, Buffer or process, as in a browser.
    const context: { result?: unknown; TextEncoder: typeof TextEncoder } = { TextEncoder };
    runInNewContext(code, context);
    expect(context.result).toEqual({ implementation: "portable", check: 0xe306_9283 });
  });
});
