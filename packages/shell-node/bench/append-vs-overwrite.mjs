#!/usr/bin/env node
/**
 * Why SQLite `synchronous=FULL` can beat the raw write+fdatasync loop at one
 * producer (issue 16): a durable write that grows its file changes the
 * file's size, so ext4 commits its journal on every sync; a write into a
 * file already that long (SQLite's WAL, reused after each checkpoint) syncs
 * the data alone. This times N synced writes of B bytes (default 3,000 of
 * 395, Tay's bytes per inserted job) in five ways, ROUNDS times alternated:
 * appended and fdatasync'd (the raw loop of bench:peers), appended through
 * O_DSYNC (Tay `Maximal`), and written over a file first extended by
 * ftruncate (sparse) or by zeros, with fdatasync or O_DSYNC. Tay's format
 * cannot take the faster shapes: a segment's bytes end with its last record
 * (FORMAT.md: zeros past it are `BadMagic`, and open never truncates a
 * tail). docs/benchmarks.md, "One producer against SQLite FULL", has the
 * results.
 *
 *   node packages/shell-node/bench/append-vs-overwrite.mjs
 *   N=5000 B=130 ROUNDS=3 node packages/shell-node/bench/append-vs-overwrite.mjs
 *
 * Data in bench/tmp (TAY_BENCH_DIR), never /tmp (tmpfs syncs nothing).
 */
import {
  closeSync,
  constants,
  fdatasyncSync,
  ftruncateSync,
  openSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { benchRoot, machineLoad } from "./lib/common.mjs";

const writes = Number(process.env.N ?? 3_000);
const bytes = Number(process.env.B ?? 395);
const rounds = Number(process.env.ROUNDS ?? 2);
const record = Buffer.alloc(bytes, 7);
const path = join(benchRoot(), "append-vs-overwrite");

const extendSparse = (fd) => ftruncateSync(fd, writes * bytes + 4096);
const extendZeros = (fd) => {
  writeSync(fd, Buffer.alloc(writes * bytes + 4096));
  fdatasyncSync(fd);
};
const shapes = [
  { name: "append + fdatasync (raw loop)", extend: undefined, dsync: false },
  { name: "append, O_DSYNC (Tay Maximal)", extend: undefined, dsync: true },
  { name: "over ftruncate'd + fdatasync", extend: extendSparse, dsync: false },
  { name: "over zeros + fdatasync", extend: extendZeros, dsync: false },
  { name: "over zeros, O_DSYNC", extend: extendZeros, dsync: true },
];

/** Synced writes per second of one shape. */
const run = ({ extend, dsync }) => {
  rmSync(path, { force: true });
  const setup = openSync(path, "w");
  extend?.(setup);
  closeSync(setup);
  const fd = openSync(path, constants.O_WRONLY | (dsync ? constants.O_DSYNC : 0));
  const started = performance.now();
  for (let index = 0; index < writes; index++) {
    writeSync(fd, record, 0, bytes, index * bytes);
    if (!dsync) fdatasyncSync(fd);
  }
  const seconds = (performance.now() - started) / 1000;
  closeSync(fd);
  rmSync(path);
  return writes / seconds;
};

const load = (label) => {
  const { load1, load5 } = machineLoad();
  console.log(`${label}: load ${load1.toFixed(2)} ${load5.toFixed(2)}`);
};
load("before");
const results = new Map(shapes.map((shape) => [shape.name, []]));
for (let round = 0; round < rounds; round++) {
  for (const shape of shapes) results.get(shape.name).push(run(shape));
}
const base = results.get(shapes[0].name);
for (const [name, rates] of results) {
  const ratios = rates.map((rate, index) => (rate / base[index]).toFixed(2));
  console.log(
    `${name.padEnd(32)} ${rates.map((rate) => Math.round(rate).toString().padStart(6)).join(" ")} writes/s  (÷ raw loop ${ratios.join(" ")})`,
  );
}
load("after");
