// CPU profiles of one phase of a benchmark, taken in-process with the V8
// inspector (what `node --cpu-prof` records, limited to the phase), and
// summarized: self time by function, and by where the code lives (the Effect
// runtime, codec, core, shell-node, Node itself, GC, idle).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

/** Which part of the system a call frame belongs to. */
const areaOf = (frame) => {
  const { url, functionName } = frame;
  if (functionName === "(garbage collector)") return "GC";
  if (functionName === "(idle)") return "idle (waiting for I/O)";
  if (functionName === "(program)") return "V8/native (program)";
  if (url.includes("/packages/codec/")) return "@tay/codec";
  if (url.includes("/packages/core/")) return "@tay/core";
  if (url.includes("/packages/shell-node/dist/")) return "@tay/shell-node";
  if (url.includes("/packages/shell-node/bench/") || url.includes("/bench/peers/"))
    return "benchmark driver";
  if (url.includes("/effect/")) return "effect runtime";
  if (url.includes("better-sqlite3")) return "better-sqlite3";
  if (url.includes("ioredis") || url.includes("bullmq")) return "bullmq/ioredis";
  if (url.startsWith("node:") || url === "") return "Node built-ins / native";
  return "other";
};

const nameOf = (frame) => {
  const file = frame.url.split("/").slice(-2).join("/") || "native";
  return `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
};

// The in-process profiler's own work (serializing the profile at
// `Profiler.stop`) is sampled as the native `dispatch`: not the phase's time.
const isProfilerOwn = (frame) => frame.functionName === "dispatch" && frame.url === "";

const isTay = (frame) => /\/packages\/(codec|core|shell-node)\/dist\//.test(frame.url);

/**
 * Self time per function and per area of a V8 CPU profile, and inclusive
 * time of Tay's own functions (what a call costs with everything it calls),
 * largest first, in % of the sampled time.
 */
export const summarizeProfile = (profile, top = 15) => {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parents.set(child, node.id);
  }
  const byFunction = new Map();
  const byArea = new Map();
  const inclusive = new Map();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const node = nodes.get(id);
    const delta = profile.timeDeltas[index] ?? 0;
    if (node === undefined || isProfilerOwn(node.callFrame)) return;
    total += delta;
    const name = nameOf(node.callFrame);
    byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
    const area = areaOf(node.callFrame);
    byArea.set(area, (byArea.get(area) ?? 0) + delta);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parents.get(at)) {
      const frame = nodes.get(at)?.callFrame;
      if (frame === undefined || !isTay(frame)) continue;
      const frameName = nameOf(frame);
      if (seen.has(frameName)) continue;
      seen.add(frameName);
      inclusive.set(frameName, (inclusive.get(frameName) ?? 0) + delta);
    }
  });
  const ranked = (map, count) =>
    [...map]
      .sort((left, right) => right[1] - left[1])
      .slice(0, count)
      .map(([name, time]) => ({ name, percent: Math.round((1000 * time) / total) / 10 }));
  return {
    sampledMs: Math.round(total / 1000),
    areas: ranked(byArea, 12),
    functions: ranked(byFunction, top),
    tayInclusive: ranked(inclusive, top),
  };
};

/**
 * For each `[label, pattern]`, the share (% of the sampled time, idle
 * included) of samples with a frame on their stack whose
 * `functionName file:line` matches `pattern`: what a family of functions
 * costs with everything it calls. Stacks end where an async resumption
 * starts them again (an Effect fiber's run loop), so this is a floor.
 */
export const inclusiveShares = (profile, patterns) => {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parents.set(child, node.id);
  }
  const sums = patterns.map(() => 0);
  let total = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    const node = nodes.get(id);
    if (node === undefined || isProfilerOwn(node.callFrame)) return;
    total += delta;
    const names = [];
    for (let at = id; at !== undefined; at = parents.get(at)) {
      const frame = nodes.get(at)?.callFrame;
      if (frame !== undefined) names.push(nameOf(frame));
    }
    patterns.forEach(([, pattern], position) => {
      if (names.some((name) => pattern.test(name))) sums[position] += delta;
    });
  });
  return patterns.map(([label], position) => ({
    name: label,
    percent: total === 0 ? 0 : Math.round((1000 * sums[position]) / total) / 10,
  }));
};

/**
 * Runs `body` under the CPU profiler and returns its result with the
 * profile's summary and the profile itself; writes the raw profile to
 * `path` when given (open it in Chrome DevTools or speedscope).
 */
export const profilePhase = async (body, path) => {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  let result;
  try {
    result = await body();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    session.disconnect();
    if (path !== undefined) writeFileSync(path, JSON.stringify(profile));
    result = { result, summary: summarizeProfile(profile), profile };
  }
  return result;
};

/** Prints a profile summary as two short lists. */
export const printProfile = (title, summary) => {
  console.log(`\nprofile: ${title} (${summary.sampledMs} ms sampled)`);
  console.log("  self time by area:");
  for (const { name, percent } of summary.areas) {
    console.log(`    ${String(percent).padStart(5)}%  ${name}`);
  }
  console.log("  self time by function:");
  for (const { name, percent } of summary.functions) {
    console.log(`    ${String(percent).padStart(5)}%  ${name}`);
  }
  console.log("  inclusive time of Tay's functions:");
  for (const { name, percent } of summary.tayInclusive) {
    console.log(`    ${String(percent).padStart(5)}%  ${name}`);
  }
};

/**
 * Runs `node [--cpu-prof] open-child.mjs system directory` (one cold open in
 * a fresh process) and returns its JSON line; with `cpuProfileDirectory`, the
 * child runs under `node --cpu-prof` and the summary of its profile is added.
 */
export const openInChild = (system, directory, cpuProfileDirectory) => {
  const child = new URL("./open-child.mjs", import.meta.url).pathname;
  // --expose-gc lets the child measure the heap it holds after a full collection.
  const flags =
    cpuProfileDirectory === undefined
      ? ["--expose-gc"]
      : [
          "--expose-gc",
          "--cpu-prof",
          `--cpu-prof-dir=${cpuProfileDirectory}`,
          "--cpu-prof-interval=200",
        ];
  const run = spawnSync(process.execPath, [...flags, child, system, directory], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (run.status !== 0) {
    throw new Error(`open-child ${system} failed (${run.status ?? run.signal}): ${run.stderr}`);
  }
  const lines = run.stdout.trim().split("\n");
  const result = JSON.parse(lines[lines.length - 1] ?? "{}");
  if (cpuProfileDirectory !== undefined) {
    const file = readdirSync(cpuProfileDirectory)
      .filter((name) => name.endsWith(".cpuprofile"))
      .map((name) => join(cpuProfileDirectory, name))
      .sort((left, right) => statSync(right).mtimeMs - statSync(left).mtimeMs)[0];
    if (file !== undefined) {
      result.profile = summarizeProfile(JSON.parse(readFileSync(file, "utf8")));
      result.profilePath = file;
    }
  }
  return result;
};
