// Shared pieces of the store benchmark (../store.bench.mjs) and the peer
// comparison (bench/peers/run.mjs): where the data goes, the job payload
// every system stores, timing and percentiles, the machine's load, tables.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { GCProfiler, getHeapStatistics } from "node:v8";

/** The repository root (this file is packages/shell-node/bench/lib/common.mjs). */
export const repositoryRoot = resolve(new URL("../../../../", import.meta.url).pathname);

/**
 * Where benchmark data goes: `TAY_BENCH_DIR`, or the repository's git-ignored
 * bench/tmp. The repository's disk, not /tmp: /tmp is tmpfs on many hosts,
 * and an fsync on tmpfs measures nothing.
 */
export const benchRoot = () => {
  const root = process.env.TAY_BENCH_DIR ?? join(repositoryRoot, "bench", "tmp");
  mkdirSync(root, { recursive: true });
  return root;
};

/** A fresh, empty directory under the bench root (removed first if left over). */
export const freshDirectory = (name) => {
  const path = join(benchRoot(), name);
  rmSync(path, { recursive: true, force: true });
  mkdirSync(path, { recursive: true });
  return path;
};

export const removeDirectory = (path) => rmSync(path, { recursive: true, force: true });

/**
 * The mount `path` lives on, from /proc/self/mountinfo: the longest mount
 * point that prefixes it. Returns `{ mountPoint, fsType, source }`.
 */
export const mountOf = (path) => {
  const absolute = resolve(path);
  let best = { mountPoint: "/", fsType: "unknown", source: "unknown" };
  let text = "";
  try {
    text = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return best;
  }
  for (const line of text.split("\n")) {
    const [left, right] = line.split(" - ");
    if (right === undefined) continue;
    const mountPoint = left.split(" ")[4];
    const [fsType, source] = right.split(" ");
    if (mountPoint === undefined) continue;
    const prefix = mountPoint.endsWith("/") ? mountPoint : `${mountPoint}/`;
    const covers = absolute === mountPoint || absolute.startsWith(prefix) || mountPoint === "/";
    if (covers && mountPoint.length >= best.mountPoint.length) {
      best = { mountPoint, fsType, source };
    }
  }
  return best;
};

/** The data directory's device and filesystem, and a warning when fsync means nothing there. */
export const describeDisk = (path) => {
  const mount = mountOf(path);
  const device = statSync(path).dev;
  const volatile = mount.fsType === "tmpfs" || mount.fsType === "ramfs";
  return {
    path,
    device,
    mountPoint: mount.mountPoint,
    fsType: mount.fsType,
    source: mount.source,
    warning: volatile ? `${path} is on ${mount.fsType}: fsync costs nothing there` : null,
  };
};

/** Bytes of every file under `path` (apparent sizes). */
export const directoryBytes = (path) => {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) total += directoryBytes(child);
    else if (entry.isFile()) total += statSync(child).size;
  }
  return total;
};

/** The args every system stores with a job: exactly `argsBytes` bytes of JSON text. */
export const argsBytes = 200;

/**
 * A job's args: JSON carrying the time it was sent (ms) padded to
 * `argsBytes` bytes, so that every job's args differ as real ones do.
 */
export const makeArgs = (sentAt = 0) => {
  const head = `{"sentAt":${sentAt.toFixed(3)},"pad":"`;
  const tail = `"}`;
  return `${head}${"x".repeat(Math.max(0, argsBytes - head.length - tail.length))}${tail}`;
};

/** Milliseconds since this process started, with sub-ms resolution. */
export const now = () => performance.now();

/** Nearest-rank percentile of an ascending array (`p` in 0..100); NaN when empty. */
export const percentile = (sorted, p) => {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
};

export const median = (values) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** Runs `body(index)` for index 0..count-1 with at most `concurrency` running at once. */
export const runConcurrently = async (count, concurrency, body) => {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      await body(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
};

export const sleep = (ms) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

/** Load averages and CPU count, for the report: the machine is shared. */
export const machineLoad = () => {
  const [one, five, fifteen] = loadavg();
  return { load1: one, load5: five, load15: fifteen, cpus: cpus().length };
};

/** The machine and versions the figures were taken on. */
export const machineInfo = () => {
  let kernel = "unknown";
  try {
    kernel = execFileSync("uname", ["-sr"], { encoding: "utf8" }).trim();
  } catch {
    // Informative only.
  }
  return {
    node: process.version,
    kernel,
    cpuModel: cpus()[0]?.model ?? "unknown",
    cpus: cpus().length,
  };
};

/** `n` with thousands separators, rounded to `digits` decimals. */
export const formatNumber = (value, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString("en-US", {
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      })
    : "n/a";

/** A ratio as `1.23x`, or n/a. */
export const formatRatio = (value) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : "n/a");

/** Prints rows (arrays of strings) as an aligned text table; the first row is the header. */
export const printTable = (rows) => {
  const widths = rows[0].map((_, column) =>
    Math.max(...rows.map((row) => String(row[column]).length)),
  );
  rows.forEach((row, index) => {
    console.log(
      row
        .map((cell, column) =>
          column === 0
            ? String(cell).padEnd(widths[column])
            : String(cell).padStart(widths[column]),
        )
        .join("  "),
    );
    if (index === 0) console.log(widths.map((width) => "-".repeat(width)).join("  "));
  });
};

/**
 * Bytes allocated on the V8 heap from now to the call of what it returns:
 * the growth of the used heap between collections (each collection's
 * "before" less the previous one's "after"), plus the growth since the last;
 * and the collections meanwhile.
 */
export const allocationCounter = () => {
  const profiler = new GCProfiler();
  profiler.start();
  const start = getHeapStatistics().used_heap_size;
  return () => {
    const end = getHeapStatistics().used_heap_size;
    const { statistics } = profiler.stop();
    let bytes = 0;
    let after = start;
    for (const collection of statistics) {
      bytes += collection.beforeGC.heapStatistics.usedHeapSize - after;
      after = collection.afterGC.heapStatistics.usedHeapSize;
    }
    return { bytes: bytes + end - after, collections: statistics.length };
  };
};
