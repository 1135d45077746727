// Proves what NodeDisk adds to the shared Disk contract (tested in the testkit's DiskContract suite):
// sync and syncDirectory reach the kernel as fdatasync and fsync of the right descriptors, flock locks exclude a second holder in this process and in another one, errno codes map to
// DiskErrorCode (EXDEV of a link across file systems too), and describe rewrites the lock file in place. It runs on a fresh directory under
// os.tmpdir() and spawns `node -e` children that try the same lock and print what happened.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { pbkdf2 } from "node:crypto";
import { existsSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "@effect/vitest";
import { Effect, Either, Fiber } from "effect";
import * as Disk from "../../src/disk/Disk.js";
import * as NodeDisk from "../../src/disk/NodeDisk.js";

const packageDirectory = fileURLToPath(new URL("../..", import.meta.url));

const temporaryDirectory = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "tay-node-disk-"))),
  (directory) => Effect.promise(() => fs.rm(directory, { recursive: true, force: true })),
);

// The child resolves fs-ext from the package directory (its cwd); with "hold" it keeps the lock
// until its stdin closes.
const childScript = `
const fs = require("node:fs");
const fsExt = require("fs-ext");
const fd = fs.openSync(process.argv[1], "a+");
try {
  fsExt.flockSync(fd, "exnb");
} catch (error) {
  console.log(error.code === "EAGAIN" || error.code === "EWOULDBLOCK" ? "held" : "error " + error.code);
  process.exit(0);
}
console.log("acquired");
if (process.argv[2] === "hold") process.stdin.on("end", () => process.exit(0)).resume();
`;

const startChild = (lockPath: string, hold: boolean): ChildProcessWithoutNullStreams =>
  spawn(process.execPath, ["-e", childScript, lockPath, hold ? "hold" : "try"], {
    cwd: packageDirectory,
  });

/** The first line the child prints. */
const firstLine = (child: ChildProcessWithoutNullStreams): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    let output = "";
    let done = false;
    const finish = (line: string) => {
      if (done) return;
      done = true;
      resume(Effect.succeed(line));
    };
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const end = output.indexOf("\n");
      if (end >= 0) finish(output.slice(0, end));
    });
    child.on("exit", (code) => finish(`exited ${code} before printing: ${output}`));
  });

const exited = (child: ChildProcessWithoutNullStreams): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null) return resume(Effect.void);
    child.on("exit", () => resume(Effect.void));
  });

/** Runs a child that only tries the lock, and returns what it printed. */
const tryLockFromChild = (lockPath: string) =>
  Effect.flatMap(
    Effect.sync(() => startChild(lockPath, false)),
    firstLine,
  );

/** A child that holds the lock until the scope closes (its stdin is ended, it exits). */
const holdLockFromChild = (lockPath: string) =>
  Effect.acquireRelease(
    Effect.sync(() => startChild(lockPath, true)),
    (child) =>
      Effect.zipRight(
        Effect.sync(() => child.stdin.end()),
        exited(child),
      ),
  );

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/**
 * The open(2) flags of this process's descriptors on `file`, read from
 * /proc (Linux): what the kernel was really asked for.
 */
const descriptorFlags = (file: string): Effect.Effect<ReadonlyArray<number>> =>
  Effect.promise(async () => {
    const flags: Array<number> = [];
    for (const fd of await fs.readdir("/proc/self/fd")) {
      const target = await fs.readlink(`/proc/self/fd/${fd}`).catch(() => "");
      if (target !== file) continue;
      const info = await fs.readFile(`/proc/self/fdinfo/${fd}`, "utf8");
      const octal = /^flags:\s+([0-7]+)$/m.exec(info)?.[1];
      if (octal !== undefined) flags.push(Number.parseInt(octal, 8));
    }
    return flags;
  });

describe("NodeDisk dataSync", () => {
  it.scoped("opens with O_DSYNC exactly when dataSync is asked for a writable handle", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      const file = path.join(directory, "segment.tay");
      const created = yield* NodeDisk.make.create(file, bytes("header"));
      yield* created.close();
      const dsync = (yield* Effect.promise(() => import("node:fs"))).constants.O_DSYNC;
      for (const [mode, dataSync, expected] of [
        ["readWrite", true, true],
        ["readWrite", false, false],
        ["read", true, false],
      ] as const) {
        const handle = yield* NodeDisk.make.open(file, mode, { dataSync });
        const flags = yield* descriptorFlags(file);
        expect(flags).toHaveLength(1);
        expect(((flags[0] ?? 0) & dsync) !== 0).toBe(expected);
        expect(handle.dataSync).toBe(expected);
        yield* handle.close();
      }
    }),
  );
});

/**
 * Runs `use` with node:fs's `name` (fdatasync, fsync) wrapped to record the
 * path of each descriptor it is called on: what NodeDisk asks of the kernel,
 * which no reading of the files afterwards can tell.
 */
const recordingCalls = (name: "fdatasync" | "fsync" | "read") =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const nodeFs: Record<string, unknown> = createRequire(import.meta.url)("node:fs");
      const original = nodeFs[name];
      const paths: Array<string> = [];
      if (typeof original !== "function") throw new Error(`node:fs has no ${name}`);
      Reflect.set(nodeFs, name, (fd: number, ...rest: Array<unknown>) => {
        paths.push(readlinkSync(`/proc/self/fd/${fd}`));
        return Reflect.apply(original, nodeFs, [fd, ...rest]);
      });
      syncBuiltinESMExports();
      return { paths, restore: () => Reflect.set(nodeFs, name, original) };
    }),
    ({ restore }) =>
      Effect.sync(() => {
        restore();
        syncBuiltinESMExports();
      }),
  );

/** Where /proc/self/fd/N points for `file`: its real path (os.tmpdir() may be a link). */
const realPath = (file: string): string => realpathSync(file);

describe("NodeDisk syncs", () => {
  it.scoped.skipIf(process.platform !== "linux")(
    "sync is an fdatasync of the handle's file; syncDirectory an fsync of the directory",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const file = path.join(directory, "segment.tay");
        const handle = yield* NodeDisk.make.create(file, bytes("header"));
        const datasyncs = yield* recordingCalls("fdatasync");
        const fsyncs = yield* recordingCalls("fsync");
        yield* handle.sync();
        expect(datasyncs.paths).toEqual([realPath(file)]);
        yield* NodeDisk.make.syncDirectory(directory);
        expect(fsyncs.paths).toEqual([realPath(directory)]);
        yield* handle.close();
      }),
  );
});

describe("NodeDisk readFile", () => {
  // The rule (2026-12-07): a whole file is asked for in one read(2), as large as fstat says, where
  // fs.readFile asked for 512 KiB a trip to the thread pool (46 trips for the terminal index's
  // 24 MB offsets file). A file whose size says 0 (a /proc file) is read on until a read is empty.
  it.scoped.skipIf(process.platform !== "linux")(
    "reads a file in one read as large as its size, and a pseudo-file of size 0 whole",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const file = path.join(directory, "offsets");
        const contents = new Uint8Array(3 * 1024 * 1024 + 17).map((_, index) => (index * 31) % 251);
        yield* Effect.promise(() => fs.writeFile(file, contents));
        const reads = yield* recordingCalls("read");
        const whole = yield* NodeDisk.make.readFile(file);
        expect(reads.paths).toEqual([realPath(file)]);
        expect(Buffer.isBuffer(whole)).toBe(false);
        expect(Buffer.compare(Buffer.from(whole), Buffer.from(contents))).toBe(0);
        const empty = path.join(directory, "empty");
        yield* Effect.promise(() => fs.writeFile(empty, ""));
        expect((yield* NodeDisk.make.readFile(empty)).length).toBe(0);
        const status = yield* NodeDisk.make.readFile("/proc/self/status");
        expect(new TextDecoder().decode(status)).toMatch(/^Name:[\s\S]*\nPid:\s+\d+\n[\s\S]*\n$/);
        expect(Buffer.isBuffer(status)).toBe(false);
      }),
  );
});

describe("NodeDisk write.inline", () => {
  it.scopedLive(
    "writes through the O_DSYNC descriptor on the caller's thread: the bytes are there when it returns",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const file = path.join(directory, "segment.tay");
        const created = yield* NodeDisk.make.create(file, bytes("header"));
        yield* created.close();
        const dsync = (yield* Effect.promise(() => import("node:fs"))).constants.O_DSYNC;
        const handle = yield* NodeDisk.make.open(file, "readWrite", { dataSync: true });
        const inline = handle.write.inline;
        expect(inline).toBeDefined();
        // The thread pool is kept busy (libuv runs pbkdf2 there), so a write handed to it would
        // still wait when the file is read just below.
        const busy = Array.from({ length: 16 }, () =>
          Effect.promise(
            () =>
              new Promise<void>((resolve) =>
                pbkdf2("p", "s", 100_000, 32, "sha256", () => resolve()),
              ),
          ),
        );
        const pool = yield* Effect.fork(Effect.all(busy, { concurrency: "unbounded" }));
        yield* Effect.sleep(5);
        const outcome = inline?.(6, bytes("-record"));
        // Read at once, before this fiber yields: an answer before the write returned fails here.
        const contents = readFileSync(file, "utf8");
        expect(outcome).toEqual(Either.right(7));
        expect(contents).toBe("header-record");
        const flags = yield* descriptorFlags(file);
        expect(flags).toHaveLength(1);
        expect((flags[0] ?? 0) & dsync).not.toBe(0);
        yield* handle.close();
        const closed = inline?.(13, bytes("!"));
        expect(closed !== undefined && Either.isLeft(closed)).toBe(true);
        expect(readFileSync(file, "utf8")).toBe("header-record");
        yield* Fiber.join(pool);
      }),
  );
});

describe("NodeDisk locks (flock)", () => {
  it.scoped("a second lock from this process is refused until the first is released", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      const lockPath = path.join(directory, "LOCK");
      const first = yield* NodeDisk.make.lock(lockPath);
      const refused = yield* Effect.flip(NodeDisk.make.lock(lockPath));
      expect(refused).toEqual(new Disk.LockHeld({ path: lockPath }));
      yield* first.release();
      const second = yield* NodeDisk.make.lock(lockPath);
      yield* second.release();
    }),
  );

  it.scoped(
    "another process cannot take a lock this process holds, and can once it is released",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const lockPath = path.join(directory, "LOCK");
        const held = yield* NodeDisk.make.lock(lockPath);
        expect(yield* tryLockFromChild(lockPath)).toBe("held");
        yield* held.release();
        expect(yield* tryLockFromChild(lockPath)).toBe("acquired");
      }),
  );

  it.scoped("this process cannot take a lock another process holds", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      const lockPath = path.join(directory, "LOCK");
      yield* Effect.scoped(
        Effect.gen(function* () {
          const child = yield* holdLockFromChild(lockPath);
          expect(yield* firstLine(child)).toBe("acquired");
          const refused = yield* Effect.flip(NodeDisk.make.lock(lockPath));
          expect(refused._tag).toBe("LockHeld");
        }),
      );
      // The child has exited: the kernel dropped its lock with its descriptor.
      const mine = yield* NodeDisk.make.lock(lockPath);
      yield* mine.release();
    }),
  );

  it.scoped(
    "describe rewrites the lock file in place (same inode, truncated to the new contents)",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const lockPath = path.join(directory, "LOCK");
        const lock = yield* NodeDisk.make.lock(lockPath);
        const before = yield* Effect.promise(() => fs.stat(lockPath));
        yield* lock.describe(bytes('{"pid":12345,"host":"a-long-host-name"}'));
        yield* lock.describe(bytes('{"pid":1}'));
        const after = yield* Effect.promise(() => fs.stat(lockPath));
        expect(after.ino).toBe(before.ino);
        expect(yield* Effect.promise(() => fs.readFile(lockPath, "utf8"))).toBe('{"pid":1}');
        yield* lock.release();
      }),
  );

  it.scoped("a lock leaves no descriptor open once released, nor when it is refused", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      const lockPath = path.join(directory, "LOCK");
      const held = yield* NodeDisk.make.lock(lockPath);
      yield* Effect.flip(NodeDisk.make.lock(lockPath));
      expect(yield* descriptorFlags(lockPath)).toHaveLength(1);
      yield* held.release();
      expect(yield* descriptorFlags(lockPath)).toHaveLength(0);
    }),
  );

  it.scoped(
    "describe after release fails and writes nothing, not even to the file that took its descriptor",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const lockPath = path.join(directory, "LOCK");
        const other = path.join(directory, "other");
        yield* Effect.promise(() => fs.writeFile(other, "kept"));
        const lock = yield* NodeDisk.make.lock(lockPath);
        yield* lock.release();
        // The lowest free descriptor: most likely the one the lock just closed.
        yield* Effect.acquireRelease(
          Effect.promise(() => fs.open(other, "r+")),
          (handle) => Effect.promise(() => handle.close()),
        );
        const late = yield* Effect.either(lock.describe(bytes("late")));
        expect(Either.isLeft(late)).toBe(true);
        expect(yield* Effect.promise(() => fs.readFile(other, "utf8"))).toBe("kept");
      }),
  );
});

describe("NodeDisk errors", () => {
  it.scoped("errno codes outside DiskErrorCode become Other, with the code in the detail", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      yield* NodeDisk.make.makeDirectory(path.join(directory, "parent"));
      const error = yield* Effect.flip(
        NodeDisk.make.rename(
          path.join(directory, "parent"),
          path.join(directory, "parent", "child"),
        ),
      );
      expect(error.code).toBe("Other");
      expect(error.detail).toMatch(/^EINVAL: /);
      expect(error.operation).toBe("rename");
      expect(error.message).toContain("rename");
    }),
  );

  // A real second file system: /dev/shm is a tmpfs on Linux; where it is missing or on the same
  // device as the temporary directory there is nothing to cross, and the test says so.
  const otherFileSystem = "/dev/shm";
  const crossDevice =
    existsSync(otherFileSystem) && statSync(otherFileSystem).dev !== statSync(os.tmpdir()).dev;
  it.scoped.skipIf(!crossDevice)(
    "link across file systems is EXDEV (how a store without hard links is told apart)",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const source = path.join(directory, "staged");
        yield* Effect.promise(() => fs.writeFile(source, "header"));
        const target = path.join(otherFileSystem, `tay-node-disk-${process.pid}-${Date.now()}`);
        const error = yield* Effect.flip(NodeDisk.make.link(source, target));
        expect(error).toMatchObject({ _tag: "DiskError", operation: "link", code: "EXDEV" });
        expect(existsSync(target)).toBe(false);
      }),
  );

  it.scoped("errors name the operation and the path", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      const missing = path.join(directory, "missing");
      const error = yield* Effect.flip(NodeDisk.make.open(missing, "read"));
      expect(error).toMatchObject({
        _tag: "DiskError",
        operation: "open",
        path: missing,
        code: "ENOENT",
      });
    }),
  );

  it.scoped("the layer provides NodeDisk as the Disk service", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      yield* Effect.promise(() => fs.writeFile(path.join(directory, "file"), "x"));
      const names = yield* Effect.flatMap(Disk.Disk, (disk) => disk.readDirectory(directory)).pipe(
        Effect.provide(NodeDisk.layer),
      );
      expect(names).toEqual(["file"]);
    }),
  );

  it.scoped("reads return plain Uint8Arrays, never Buffers", () =>
    Effect.gen(function* () {
      const directory = yield* temporaryDirectory;
      const file = path.join(directory, "file");
      yield* Effect.promise(() => fs.writeFile(file, "contents"));
      const whole = yield* NodeDisk.make.readFile(file);
      expect(Buffer.isBuffer(whole)).toBe(false);
      const handle = yield* NodeDisk.make.open(file, "read");
      const part = yield* handle.read(0, 4);
      expect(Buffer.isBuffer(part)).toBe(false);
      expect(new TextDecoder().decode(part)).toBe("cont");
      yield* handle.close();
    }),
  );

  // The rule of `inlineWrites`: on a handle opened with it, a write of at most
  // `inlineWriteBytesMax` is made on the caller's thread (it completes inside runSync), while a
  // larger one goes through the thread pool (runSync cannot finish it); so does every write of a
  // handle opened without it, and of an O_DSYNC handle even if asked. Either way the bytes land.
  it.scopedLive(
    "writes small page-cache writes inline, O_DSYNC and large writes off the thread",
    () =>
      Effect.gen(function* () {
        const directory = yield* temporaryDirectory;
        const completesInline = (effect: Effect.Effect<unknown, unknown>) =>
          Effect.sync(() => {
            try {
              Effect.runSync(effect);
              return true;
            } catch {
              return false;
            }
          });
        const small = new Uint8Array(NodeDisk.inlineWriteBytesMax).fill(1);
        const large = new Uint8Array(NodeDisk.inlineWriteBytesMax + 1).fill(2);
        const plain = yield* NodeDisk.make.open(path.join(directory, "plain"), "createExclusive", {
          inlineWrites: true,
        });
        expect(yield* completesInline(plain.write(0, small))).toBe(true);
        expect(yield* completesInline(plain.write(small.length, large))).toBe(false);
        const asked = yield* NodeDisk.make.open(path.join(directory, "asked"), "createExclusive");
        expect(yield* completesInline(asked.write(0, small.subarray(0, 16)))).toBe(false);
        const dsync = yield* NodeDisk.make.open(path.join(directory, "dsync"), "createExclusive", {
          dataSync: true,
          inlineWrites: true,
        });
        expect(yield* completesInline(dsync.write(0, small.subarray(0, 16)))).toBe(false);
        // The writes that runSync could not finish still complete on the thread pool.
        yield* Effect.sleep("200 millis");
        expect(yield* plain.size()).toBe(small.length + large.length);
        expect(yield* dsync.size()).toBe(16);
        expect(yield* asked.size()).toBe(16);
        yield* asked.close();
        yield* plain.close();
        yield* dsync.close();
      }),
  );
});
