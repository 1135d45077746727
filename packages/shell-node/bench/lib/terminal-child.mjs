// One case of the terminal-index benchmark in a fresh process (run with
// --expose-gc), so no earlier case's heap or JIT state colours it:
//
//   terminal-child.mjs open <directory> on|off
//     opens the engine with `terminalIndex` on or off, then after two full
//     collections measures what the open holds (live heap, off-heap buffers
//     such as a lean state's fact pages, resident size; each less the same
//     measure before the open, so loaded modules do not count), closes, and
//     prints one JSON line with the open's wall and CPU time and report.
//   terminal-child.mjs crash <directory> <jobs>
//     opens the engine with the index, inserts, claims and completes <jobs>
//     jobs, then exits without closing (what a crash leaves: every record
//     synced, the index's HEAD that of the previous close or the last
//     checkpoint). BENCH_CRASH_PRODUCERS=P: P loops each inserting,
//     claiming and completing one job at a time, so that some record is
//     always pending when a commit is told (a store never idle), instead of
//     batches of 1,000 one after the other.
//   terminal-child.mjs crc <directory>
//     the baseline: reads every segment file of the store (what an open
//     reads) in 4 MiB chunks and runs the codec's CRC-32C over the bytes.
import { openSync, readSync, closeSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { crc32c } from "@tay/codec";
import { EnginePromises } from "../../dist/index.js";

const [mode, directory, index] = process.argv.slice(2);

const collect = () => {
  globalThis.gc?.();
  globalThis.gc?.();
};
const held = () => {
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed, external: usage.external };
};

/** Every file under `path` whose name ends in `.tay` (the log's segments). */
const segmentFiles = (path) =>
  readdirSync(path, { withFileTypes: true }).flatMap((entry) => {
    const child = join(path, entry.name);
    if (entry.isDirectory()) return segmentFiles(child);
    return entry.name.endsWith(".tay") ? [child] : [];
  });

const readAndCheck = () => {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
  let bytes = 0;
  let crc = 0;
  const files = segmentFiles(join(directory, "epochs"));
  for (const file of files) {
    const handle = openSync(file, "r");
    const size = statSync(file).size;
    for (let position = 0; position < size; ) {
      const read = readSync(handle, buffer, 0, buffer.length, position);
      if (read === 0) break;
      crc = crc32c(buffer.subarray(0, read), crc);
      position += read;
      bytes += read;
    }
    closeSync(handle);
  }
  const used = process.cpuUsage(cpu);
  return {
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (used.user + used.system) / 1e6,
    files: files.length,
    bytes,
    crc,
  };
};

const openOnce = async () => {
  collect();
  const before = held();
  const started = performance.now();
  const cpu = process.cpuUsage();
  const promises = await EnginePromises.open(directory, {
    durability: "Maximal",
    terminalIndex: index === "on",
    timers: false,
  });
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  collect();
  const after = held();
  const report = promises.engine.report;
  let jobs = 0;
  for (const counts of promises.counts().values()) {
    jobs += Object.values(counts).reduce((sum, value) => sum + value, 0);
  }
  await promises.close();
  return {
    index,
    seconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    jobs,
    rssBytes: after.rss - before.rss,
    heapBytes: after.heap - before.heap,
    externalBytes: after.external - before.external,
    records: report.records,
    bytes: report.bytes,
    foldMs: report.foldMs,
    rebuilt: report.terminalIndex?.rebuilt ?? null,
    // Why the open folded every record instead of resuming from the state image, or null.
    imageRefused: report.terminalIndex?.imageRefused ?? null,
  };
};

/** Work, then an exit without a close. */
const crashAfter = async (count) => {
  // BENCH_CHECKPOINT_RECORDS: the engine's checkpointRecords ("false": none).
  const setting = process.env.BENCH_CHECKPOINT_RECORDS;
  const promises = await EnginePromises.open(directory, {
    durability: "Maximal",
    terminalIndex: true,
    timers: false,
    ...(setting === undefined
      ? {}
      : { checkpointRecords: setting === "false" ? false : Number(setting) }),
  });
  const producers = Number(process.env.BENCH_CRASH_PRODUCERS ?? 0);
  if (producers > 0) {
    let next = 0;
    const loop = async () => {
      while (next < count) {
        const at = next++;
        await promises.insert({ queue: "tail", worker: "W", args: { at } });
        for (const job of await promises.claim("tail", 1)) await promises.complete(job.jobId, null);
      }
    };
    await Promise.all(Array.from({ length: producers }, loop));
    console.log(JSON.stringify({ crashedAfter: count, producers }));
    process.exit(0);
  }
  const batch = 1000;
  for (let done = 0; done < count; done += batch) {
    const size = Math.min(batch, count - done);
    await promises.insertMany(
      Array.from({ length: size }, (_, at) => ({ queue: "tail", worker: "W", args: { at } })),
    );
    const claimed = await promises.claim("tail", size);
    await Promise.all(claimed.map((job) => promises.complete(job.jobId, null)));
  }
  console.log(JSON.stringify({ crashedAfter: count }));
  process.exit(0);
};

if (mode === "crash" && directory !== undefined && Number.isInteger(Number(index))) {
  await crashAfter(Number(index));
} else if (mode === "crc" && directory !== undefined) {
  console.log(JSON.stringify(readAndCheck()));
} else if (mode === "open" && directory !== undefined && (index === "on" || index === "off")) {
  console.log(JSON.stringify(await openOnce()));
} else {
  console.error("usage: terminal-child.mjs open <directory> on|off | crc <directory>");
  process.exit(2);
}
