// Payloads handed out as views of shared chunks must behave as copies: a
// later encode never changes an earlier payload, and payloads never overlap.
import { describe, expect, it } from "vitest";
import { keep } from "../../src/internal/payloadArena.js";

describe("keep", () => {
  it("returns copies that later calls never overwrite, across chunk boundaries", () => {
    const scratch = new Uint8Array(8192);
    const kept: Array<{
      readonly view: Uint8Array;
      readonly fill: number;
      readonly length: number;
    }> = [];
    // 3,000 payloads of up to 4 KiB span many 64 KiB chunks, and some get buffers of their own.
    for (let index = 0; index < 3000; index++) {
      const length = (index * 37) % 4200;
      const fill = index % 251;
      scratch.fill(fill, 0, length);
      kept.push({ view: keep(scratch, length), fill, length });
      scratch.fill(0xff);
    }
    for (const { view, fill, length } of kept) {
      expect(view.length).toBe(length);
      expect(view.every((byte) => byte === fill)).toBe(true);
    }
  });

  it("starts a new chunk for a payload exactly one byte longer than the chunk has left", () => {
    const scratch = new Uint8Array(4096);
    // One-byte payloads until one lands at a chunk's start: the chunk then holds 1 byte.
    for (let tries = 0; keep(scratch, 1).byteOffset !== 0; tries++)
      expect(tries).toBeLessThan(70_000);
    // Fifteen of the largest shared payloads: 61,441 bytes used, 4,095 left of 65,536.
    for (let index = 0; index < 15; index++) keep(scratch, 4096);
    scratch.fill(9);
    const view = keep(scratch, 4096);
    expect(view.byteOffset).toBe(0);
    expect(view.length).toBe(4096);
    expect(view.every((byte) => byte === 9)).toBe(true);
  });

  it("gives a large payload a buffer of its own", () => {
    const scratch = new Uint8Array(10_000).fill(7);
    const view = keep(scratch, 10_000);
    expect(view.byteOffset).toBe(0);
    expect(view.buffer.byteLength).toBe(10_000);
  });
});
