// Proves the parts of NodeDisk that differ per runtime behave on Node as the other runtimes rely
// on: the runtime is read from `process.versions`, Deno's `undefined` callback errors mean
// success, thrown errors keep their errno code, a runtime's untyped API is checked before it is
// called, and the fs-ext addon is loaded on the first lock,
// not when the shell is imported (Bun and Deno cannot load it). The last runs the BUILT dist in
// a `node` child and reads its CommonJS module cache before and after a lock.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { invoke, MissingMember, member } from "../../src/disk/internal/dynamic.js";
import { asErrno, failed, toDiskError } from "../../src/disk/internal/nodeDiskCall.js";
import { detect } from "../../src/disk/internal/runtime.js";

describe("the runtime", () => {
  it("is Bun or Deno when process.versions says so, Node otherwise", () => {
    expect(detect({ node: "22.0.0", bun: "1.4.5" })).toBe("bun");
    expect(detect({ node: "22.0.0", deno: "2.9.6" })).toBe("deno");
    expect(detect({ node: "20.20.2" })).toBe("node");
    expect(detect(process.versions)).toBe("node");
  });
});

describe("node:fs callbacks on every runtime", () => {
  it("take null and undefined (Deno's fs.rename, fs.unlink) as success", () => {
    expect(failed(null)).toBe(false);
    expect(failed(undefined)).toBe(false);
    expect(failed(Object.assign(new Error("gone"), { code: "ENOENT" }))).toBe(true);
  });

  it("map a thrown error's string code (Node's, Deno's) and nothing else", () => {
    const deno = Object.assign(new Error("Is a directory (os error 21)"), { code: "EISDIR" });
    expect(toDiskError("lock", "/data/LOCK", asErrno(deno)).code).toBe("EISDIR");
    const numbered = Object.assign(new Error("odd"), { code: 21 });
    expect(toDiskError("lock", "/data/LOCK", asErrno(numbered)).code).toBe("Other");
    expect(toDiskError("lock", "/data/LOCK", asErrno("text")).detail).toBe("UNKNOWN: text");
  });
});

describe("reaching a runtime's untyped API (Bun's bun:ffi, Deno's namespace)", () => {
  it("calls a method with its object as `this`", () => {
    const file = {
      locked: false,
      tryLock(exclusive: boolean) {
        this.locked = exclusive;
        return true;
      },
    };
    expect(invoke(file, "tryLock", true)).toBe(true);
    expect(file.locked).toBe(true);
  });

  it("throws MissingMember for a member that is absent or not a function", () => {
    expect(() => invoke({ tryLock: true }, "tryLock")).toThrow(MissingMember);
    expect(() => invoke(undefined, "open")).toThrow("open is not available in this runtime");
  });

  it("reads a member of an object only", () => {
    expect(member({ symbols: 1 }, "symbols")).toBe(1);
    expect(member(null, "symbols")).toBeUndefined();
    expect(member("text", "length")).toBeUndefined();
  });
});

const builtDisk = fileURLToPath(new URL("../../dist/disk/NodeDisk.js", import.meta.url));

// Prints whether fs-ext is in the CommonJS cache after importing NodeDisk, then after a lock.
const childScript = `
import { createRequire } from "node:module";
const cache = createRequire(import.meta.url).cache;
const loaded = () => Object.keys(cache).some((file) => file.includes("fs-ext"));
const { Effect } = await import("effect");
const NodeDisk = await import(process.argv[1]);
const before = loaded();
const lock = await Effect.runPromise(NodeDisk.make.lock(process.argv[2]));
await Effect.runPromise(lock.release());
console.log(JSON.stringify({ before, after: loaded() }));
`;

describe("the Node lock", () => {
  it("loads fs-ext on the first lock, not on import", () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), "tay-lazy-lock-"));
    try {
      const child = spawnSync(
        process.execPath,
        ["--input-type=module", "-e", childScript, builtDisk, path.join(directory, "LOCK")],
        { cwd: fileURLToPath(new URL("../..", import.meta.url)), encoding: "utf8" },
      );
      expect(child.stderr).toBe("");
      expect(JSON.parse(child.stdout)).toEqual({ before: false, after: true });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
