/**
 * Running the BUILT `tay` binary as a child process, for the end-to-end CLI
 * suites: temporary directories, the run helper, the one-line error check,
 * byte-level damage (truncation, bit flips) and a hash of a whole tree.
 *
 * The binary is `packages/cli/bin/tay.mjs` over `dist/`: build with
 * `pnpm build` first.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Effect, Layer } from "effect";
import { afterAll, beforeAll, expect } from "vitest";
import { decodeRecord } from "@tay/codec";
import { NodeDisk } from "@tay/shell-node";
import * as Cli from "../../src/Cli.js";

const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

/** The executable under test. */
export const binary = path.join(packageRoot, "bin", "tay.mjs");

/** Fails loudly when the build is missing (the suites test the compiled CLI). */
export const requireBuild = (): void => {
  if (!existsSync(path.join(packageRoot, "dist", "main.js"))) {
    throw new Error("packages/cli/dist is missing: run `pnpm build` first");
  }
  // `bin/tay.mjs` prefers a bundle, which would run instead of `dist/`.
  if (existsSync(path.join(packageRoot, "bundle"))) {
    throw new Error(
      "packages/cli/bundle exists (a pack that did not finish?): remove it " +
        "(node packages/cli/scripts/bundle.mjs --remove) so that the suites run dist/",
    );
  }
};

/** What a run of `tay` produced. */
export interface Run {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A run in this process, with each write to standard output as it was made. */
export interface RecordedRun extends Run {
  readonly writes: ReadonlyArray<string>;
}

/**
 * Runs `Cli.run` in this process against buffers: the same program as the
 * binary without a process per run (for the cases about the logic, not
 * about the executable). `writes` keeps each write to standard output
 * apart, for the commands that print as they read.
 */
export const runRecorded = (argv: ReadonlyArray<string>): Promise<RecordedRun> => {
  const writes: Array<string> = [];
  let stderr = "";
  const terminal: Cli.TerminalService = {
    out: (text) =>
      Effect.sync(() => {
        writes.push(text);
      }),
    err: (text) =>
      Effect.sync(() => {
        stderr += text;
      }),
    isTerminal: false,
    interrupted: Effect.never,
    wasInterrupted: Effect.succeed(false),
  };
  return Effect.runPromise(
    Cli.run(argv).pipe(
      Effect.provide(Layer.merge(NodeDisk.layer, Layer.succeed(Cli.Terminal, terminal))),
      Effect.map((status) => ({ status, stdout: writes.join(""), stderr, writes })),
    ),
  );
};

/** `runRecorded` without the writes apart. */
export const runInProcess = async (argv: ReadonlyArray<string>): Promise<Run> => {
  const { status, stdout, stderr } = await runRecorded(argv);
  return { status, stdout, stderr };
};

/** Runs `tay args...` to completion (`nodeArgs` given to node first, e.g. a heap's size). */
export const tay = (
  args: ReadonlyArray<string>,
  cwd?: string,
  nodeArgs: ReadonlyArray<string> = [],
): Promise<Run> => runNode(binary, args, cwd, nodeArgs);

/** Runs the script `file` with node to completion (`tay` is this with the binary). */
export const runNode = (
  file: string,
  args: ReadonlyArray<string>,
  cwd?: string,
  nodeArgs: ReadonlyArray<string> = [],
): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs, file, ...args],
      { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const status =
          error === null ? 0 : typeof error.code === "number" ? error.code : Number.NaN;
        resolve({ status, stdout, stderr });
      },
    );
  });

/** Starts `tay args...` without waiting (for the demo and signals). */
export const spawnTay = (args: ReadonlyArray<string>): ChildProcess =>
  spawn(process.execPath, [binary, ...args], { stdio: ["ignore", "pipe", "pipe"] });

/** Runs `tay` and expects exit 0 and an empty stderr; returns stdout. */
export const ok = async (args: ReadonlyArray<string>): Promise<string> => {
  const run = await tay(args);
  expect(run.stderr, `tay ${args.join(" ")}`).toBe("");
  expect(run.status, `tay ${args.join(" ")}`).toBe(0);
  return run.stdout;
};

/** Runs `tay ... --json` and parses its one JSON document. */
export const json = async (args: ReadonlyArray<string>): Promise<unknown> =>
  JSON.parse(await ok([...args, "--json"]));

/** What a call rejected with, as text (its tag and message), or "taken" when it resolved. */
export const outcome = async (run: () => Promise<unknown>): Promise<string> => {
  try {
    await run();
    return "taken";
  } catch (error) {
    return error instanceof Error ? `${error.name} ${error.message}` : String(error);
  }
};

/**
 * Expects the run to have failed with `exit` and exactly one stderr line
 * `tay: <reason> ...`, without a stack frame; returns the line.
 */
export const expectFailure = (run: Run, reason: string, exit = 1): string => {
  const lines = run.stderr.split("\n");
  expect(lines.at(-1), "stderr ends with a newline").toBe("");
  expect(lines.length - 1, `one stderr line, got: ${run.stderr}`).toBe(1);
  const [line = ""] = lines;
  expect(line.startsWith(`tay: ${reason} `) || line.startsWith(`tay: ${reason}:`), line).toBe(true);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.status).toBe(exit);
  return line;
};

/**
 * A temporary directory made before a file's tests (after checking the
 * build, when they run the binary) and removed after them: its path, once
 * made, from the getter returned.
 */
export const temporaryRoot = (options: { readonly built?: boolean } = {}): (() => string) => {
  let root = "";
  beforeAll(async () => {
    if (options.built === true) requireBuild();
    root = await temporaryDirectory();
  });
  afterAll(async () => {
    await removeTemporary(root);
  });
  return () => root;
};

/** A fresh temporary directory; remove it with `removeTemporary`. */
export const temporaryDirectory = (): Promise<string> =>
  fs.mkdtemp(path.join(os.tmpdir(), "tay-cli-"));

export const removeTemporary = (directory: string): Promise<void> =>
  fs.rm(directory, { recursive: true, force: true });

/** The highest segment file of the store's current (only) generation. */
export const lastSegment = async (store: string): Promise<string> => {
  const epochs = (await fs.readdir(path.join(store, "epochs"))).sort();
  const epoch = epochs.at(-1) ?? "";
  const segments = path.join(store, "epochs", epoch, "segments");
  const names = (await fs.readdir(segments)).sort();
  return path.join(segments, names.at(-1) ?? "");
};

/**
 * Offsets of the records of an active (footerless) segment file: after the
 * 44-byte header, each record is 28 bytes plus its payload length (a u32 at
 * byte 16 of the record). A torn last record is listed too.
 */
export const recordOffsets = async (file: string): Promise<Array<number>> => {
  const bytes = await fs.readFile(file);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const offsets: Array<number> = [];
  for (let offset = 44; offset + 24 <= bytes.length; offset += 28 + view.getUint32(offset + 16)) {
    offsets.push(offset);
  }
  return offsets;
};

/** Cuts `bytes` bytes off the end of `file` (a torn tail). */
export const truncateBy = async (file: string, bytes: number): Promise<void> => {
  const { size } = await fs.stat(file);
  await fs.truncate(file, size - bytes);
};

/** Flips bit `bit` of the byte at `offset` of `file`. */
export const flipBit = async (file: string, offset: number, bit = 0): Promise<void> => {
  const bytes = await fs.readFile(file);
  bytes[offset] = (bytes[offset] ?? 0) ^ (1 << bit);
  await fs.writeFile(file, bytes);
};

/** SHA-256 over every path and file's bytes under `root`, in sorted order. */
export const hashTree = async (root: string): Promise<string> => {
  const hash = createHash("sha256");
  const walk = async (directory: string): Promise<void> => {
    const entries = (await fs.readdir(directory, { withFileTypes: true })).sort((left, right) =>
      left.name < right.name ? -1 : left.name > right.name ? 1 : 0,
    );
    for (const entry of entries) {
      const full = path.join(directory, entry.name);
      hash.update(`${path.relative(root, full)}\0`);
      if (entry.isDirectory()) await walk(full);
      else hash.update(await fs.readFile(full));
    }
  };
  await walk(root);
  return hash.digest("hex");
};

/** A running child: its output so far, a wait for a pattern, and its end. */
export interface Watched {
  readonly stdout: () => string;
  /** Resolves once stdout matches `pattern`; rejects if the child exits first. */
  readonly waitFor: (pattern: RegExp) => Promise<void>;
  readonly exited: Promise<Run>;
}

/** Collects a child's output from the start and follows it. */
export const watch = (child: ChildProcess): Watched => {
  let stdout = "";
  let stderr = "";
  const waiters: Array<() => void> = [];
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    for (const waiter of waiters.splice(0)) waiter();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<Run>((resolve) => {
    child.once("close", (code) => resolve({ status: code ?? Number.NaN, stdout, stderr }));
  });
  const waitFor = (pattern: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      let done = false;
      const check = () => {
        if (done) return;
        if (pattern.test(stdout)) {
          done = true;
          resolve();
        } else {
          waiters.push(check);
        }
      };
      void exited.then(() => {
        if (!done) {
          done = true;
          reject(new Error(`exited before ${pattern}: ${stdout}${stderr}`));
        }
      });
      check();
    });
  return { stdout: () => stdout, waitFor, exited };
};

/** Every record's bytes in a generation's segment files, by sequence (headers and footers left out). */
export const segmentRecords = async (data: string): Promise<Map<number, Buffer>> => {
  const epochs = path.join(data, "epochs");
  const epoch = (await fs.readdir(epochs)).sort().at(-1) ?? "";
  const segments = path.join(epochs, epoch, "segments");
  const records = new Map<number, Buffer>();
  for (const name of (await fs.readdir(segments)).sort()) {
    const bytes = await fs.readFile(path.join(segments, name));
    // A segment: a 44-byte header, the records back to back, a footer once sealed.
    for (let offset = 44; offset < bytes.length; ) {
      const decoded = decodeRecord(bytes, offset);
      if (decoded._tag !== "Record") break;
      records.set(decoded.record.sequence, bytes.subarray(offset, offset + decoded.size));
      offset += decoded.size;
    }
  }
  return records;
};
