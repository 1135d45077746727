#!/usr/bin/env node
/**
 * Codec throughput, each figure beside a raw crc32c pass over the same bytes
 * in the same run: record decode (CRCs included) for ~100-byte and 4 KiB
 * payloads, value decode, and event decode of a realistic mix with 80-byte
 * args. Prints a table, then one JSON line. Targets are reported, not
 * asserted: event decode >= 1,000,000 events/s; record decode >= 50% of the
 * raw crc32c throughput for 4 KiB payloads.
 *
 *   npx tsc -b packages/codec && node packages/codec/bench/codec.bench.mjs
 */
import {
  crc32c,
  decodeEvent,
  decodeRecord,
  decodeValue,
  encodeEvent,
  encodeRecordInto,
  encodeValue,
  recordSize,
} from "../dist/index.js";

/** Time per measured case; the whole run stays well under 30 s. */
const caseMs = Number(process.env.BENCH_CASE_MS ?? 1200);
const warmupMs = 300;

let sink = 0;

/** CPU seconds this process has used: contention from other processes does not count. */
const cpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/**
 * Runs `pass` (one pass over the data set, returning a number to keep the
 * work alive) repeatedly for `caseMs` after a warm-up. Returns passes per
 * second of this process's CPU time (the figure reported: the machine is
 * shared) and of wall time.
 */
const measure = (pass) => {
  const warmupEnd = performance.now() + warmupMs;
  while (performance.now() < warmupEnd) sink ^= pass();
  let passes = 0;
  const cpuStarted = cpuSeconds();
  const started = performance.now();
  let elapsed = 0;
  do {
    sink ^= pass();
    passes++;
    elapsed = performance.now() - started;
  } while (elapsed < caseMs);
  return { cpu: passes / (cpuSeconds() - cpuStarted), wall: passes / (elapsed / 1000) };
};

const unwrap = (either, what) => {
  if (either._tag === "Left") throw new Error(`${what}: ${JSON.stringify(either.left)}`);
  return either.right;
};

// ---------------------------------------------------------------------------
// Data sets

/** A deterministic generator, so every run measures the same bytes. */
let seed = 0x2545_f491;
const random = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4_294_967_296;
};
const randomBytes = (length) => Uint8Array.from({ length }, () => Math.floor(random() * 256));

/** `count` records with payloads of `payloadBytes`, back to back in one buffer. */
const recordBuffer = (count, payloadBytes) => {
  const buffer = new Uint8Array(count * recordSize(payloadBytes));
  let offset = 0;
  for (let sequence = 1; sequence <= count; sequence++) {
    const payload = randomBytes(payloadBytes);
    offset += encodeRecordInto(buffer, offset, { type: 1, schema: 1, sequence, payload });
  }
  return buffer;
};

const scanRecords = (buffer) => () => {
  let offset = 0;
  let count = 0;
  while (offset < buffer.length) {
    const decoded = decodeRecord(buffer, offset);
    if (decoded._tag !== "Record") throw new Error(`unexpected ${decoded._tag} at ${offset}`);
    offset += decoded.size;
    count++;
  }
  return count;
};

/** The raw CRC baseline: the same bytes, chunked as the records are. */
const crcChunks = (buffer, chunkBytes) => () => {
  let crc = 0;
  for (let offset = 0; offset < buffer.length; offset += chunkBytes) {
    crc ^= crc32c(buffer.subarray(offset, offset + chunkBytes));
  }
  return crc;
};

const crcWhole = (buffer) => () => crc32c(buffer);

/** Job args of about 80 encoded bytes, varied like real ones. */
const args = (index) =>
  new Map([
    ["account", `acct-${(index * 7919) % 100_000}`],
    ["amount", (index % 1000) + 0.25],
    ["currency", "EUR"],
    ["retry", index % 3 === 0],
  ]);

const at = 1_700_000_000_000;

/** A job's life: inserted, available, started, finished (and a result for some). */
const eventMix = (jobs) => {
  const events = [];
  for (let jobId = 1; jobId <= jobs; jobId++) {
    events.push({
      _tag: "JobInserted",
      jobId,
      queue: "default",
      worker: "Billing.Charge",
      args: args(jobId),
      priority: jobId % 10,
      maxAttempts: 20,
      scheduledAt: at + jobId,
      insertedAt: at + jobId,
    });
    events.push({ _tag: "JobAvailable", jobId, at: at + jobId + 1 });
    events.push({ _tag: "JobStarted", jobId, at: at + jobId + 2, attempt: 1 });
    events.push({
      _tag: "JobFinished",
      jobId,
      at: at + jobId + 3,
      outcome: jobId % 10 === 0 ? "discarded" : "completed",
      error: jobId % 10 === 0 ? "card declined" : null,
    });
    if (jobId % 4 === 0) {
      events.push({ _tag: "ResultRecorded", jobId, at: at + jobId + 3, result: "ok" });
    }
  }
  return events;
};

// ---------------------------------------------------------------------------
// Cases

const rows = [];

const recordCase = (name, payloadBytes, count) => {
  const buffer = recordBuffer(count, payloadBytes);
  const size = recordSize(payloadBytes);
  const passes = measure(scanRecords(buffer));
  const crcPerRecord = measure(crcChunks(buffer, size));
  const crcWholePasses = measure(crcWhole(buffer));
  rows.push({
    name,
    unit: "records",
    itemsPerSecond: passes.cpu * count,
    wallItemsPerSecond: passes.wall * count,
    megabytesPerSecond: (passes.cpu * buffer.length) / 1e6,
    crcMegabytesPerSecond: (crcPerRecord.cpu * buffer.length) / 1e6,
    crcWholeMegabytesPerSecond: (crcWholePasses.cpu * buffer.length) / 1e6,
  });
};

const payloadCase = (name, unit, payloads, decodeOne) => {
  const bytes = payloads.reduce((sum, payload) => sum + payload.length, 0);
  const passes = measure(() => {
    let count = 0;
    for (let index = 0; index < payloads.length; index++) count += decodeOne(index) ? 1 : 0;
    return count;
  });
  const crcPasses = measure(() => {
    let crc = 0;
    for (const payload of payloads) crc ^= crc32c(payload);
    return crc;
  });
  const joined = new Uint8Array(bytes);
  let offset = 0;
  for (const payload of payloads) {
    joined.set(payload, offset);
    offset += payload.length;
  }
  const crcWholePasses = measure(crcWhole(joined));
  rows.push({
    name,
    unit,
    itemsPerSecond: passes.cpu * payloads.length,
    wallItemsPerSecond: passes.wall * payloads.length,
    megabytesPerSecond: (passes.cpu * bytes) / 1e6,
    crcMegabytesPerSecond: (crcPasses.cpu * bytes) / 1e6,
    crcWholeMegabytesPerSecond: (crcWholePasses.cpu * bytes) / 1e6,
    averageBytes: Math.round(bytes / payloads.length),
  });
};

recordCase("record decode, 100 B payloads", 100, 20_000);
recordCase("record decode, 4 KiB payloads", 4096, 2_000);

const events = eventMix(2_000);
const encodedEvents = events.map((event) => unwrap(encodeEvent(event), event._tag));
const insertedPayloads = encodedEvents
  .filter((event) => event.type === 1 && event.schema === 1)
  .map((event) => event.payload);
const argsBytes = unwrap(encodeValue(args(1)), "args").length;

payloadCase("value decode, JobInserted payloads", "values", insertedPayloads, (index) =>
  decodeValue(insertedPayloads[index])._tag === "Right" ? 1 : 0,
);
payloadCase(
  "event decode, job lifecycle mix",
  "events",
  encodedEvents.map((event) => event.payload),
  (index) => {
    const event = encodedEvents[index];
    return decodeEvent(event.type, event.schema, event.payload)._tag === "Right";
  },
);

// A plain (1,1) insert beside a keyed (1,3) one (issue 20), each built with
// the field order core's constructors use (one hidden class per pair, as in
// the engine), 200-character args: what encoding a unique insert adds.
const insertEncodes = 2_000;
const plainInserts = Array.from({ length: insertEncodes }, (_, index) => ({
  _tag: "JobInserted",
  jobId: index + 1,
  queue: "bench",
  worker: "W",
  args: "x".repeat(200),
  priority: 0,
  maxAttempts: 20,
  scheduledAt: at + index,
  insertedAt: at + index,
}));
const keyedInserts = Array.from({ length: insertEncodes }, (_, index) => ({
  _tag: "JobInsertedV3",
  jobId: index + 1,
  queue: "bench",
  worker: "W",
  args: "x".repeat(200),
  priority: 0,
  maxAttempts: 20,
  scheduledAt: at + index,
  insertedAt: at + index,
  uniqueKey: `key-${index}`,
  uniquePeriodMs: null,
  timeoutMs: null,
}));
const encodeRate = (inserts) =>
  measure(() => {
    let bytes = 0;
    for (const event of inserts) bytes += unwrap(encodeEvent(event), event._tag).payload.length;
    return bytes;
  }).cpu * inserts.length;
const plainEncodesPerSecond = encodeRate(plainInserts);
const keyedEncodesPerSecond = encodeRate(keyedInserts);

// ---------------------------------------------------------------------------
// Report

const pad = (text, width) => String(text).padEnd(width);
const number = (value, digits = 0) =>
  value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

console.log(
  `codec benchmark (node ${process.version}, ${caseMs} ms per case, rates per CPU second; ` +
    `args ${argsBytes} B encoded)\n`,
);
console.log(
  `${pad("case", 38)}${pad("items/s", 20)}${pad("MB/s", 9)}${pad("crc MB/s", 10)}${pad("ratio", 8)}${pad("crc 1-call MB/s", 17)}ratio`,
);
for (const row of rows) {
  row.crcRatio = row.megabytesPerSecond / row.crcMegabytesPerSecond;
  row.crcWholeRatio = row.megabytesPerSecond / row.crcWholeMegabytesPerSecond;
  console.log(
    `${pad(row.name, 38)}${pad(`${number(row.itemsPerSecond)} ${row.unit}`, 20)}${pad(number(row.megabytesPerSecond), 9)}${pad(number(row.crcMegabytesPerSecond), 10)}${pad(number(row.crcRatio, 3), 8)}${pad(number(row.crcWholeMegabytesPerSecond), 17)}${number(row.crcWholeRatio, 3)}`,
  );
}

console.log(
  `\nevent encode, inserts with 200-character args: (1,1) ${number(plainEncodesPerSecond)}/s, ` +
    `(1,3) with a unique key ${number(keyedEncodesPerSecond)}/s ` +
    `(${number(1e6 / plainEncodesPerSecond, 2)} and ${number(1e6 / keyedEncodesPerSecond, 2)} µs; ` +
    `keyed ÷ plain ${number(keyedEncodesPerSecond / plainEncodesPerSecond, 2)}x)`,
);

const eventRow = rows.find((row) => row.unit === "events");
const largeRecordRow = rows.find((row) => row.name.includes("4 KiB"));
const targets = {
  eventDecodeEventsPerSecond: { target: 1_000_000, measured: Math.round(eventRow.itemsPerSecond) },
  recordDecode4KiBCrcRatio: {
    target: 0.5,
    measured: Number(largeRecordRow.crcRatio.toFixed(3)),
    measuredAgainstOneCallCrc: Number(largeRecordRow.crcWholeRatio.toFixed(3)),
  },
};
console.log(
  `\ntargets: event decode ${eventRow.itemsPerSecond >= 1_000_000 ? "met" : "MISSED"} (>= 1,000,000 events/s); ` +
    `4 KiB record decode ${largeRecordRow.crcRatio >= 0.5 ? "met" : "MISSED"} (>= 50% of crc32c over the same records)`,
);
console.log(
  JSON.stringify({
    benchmark: "codec",
    node: process.version,
    caseMs,
    argsBytes,
    rows: rows.map((row) => ({
      ...row,
      itemsPerSecond: Math.round(row.itemsPerSecond),
      wallItemsPerSecond: Math.round(row.wallItemsPerSecond),
      megabytesPerSecond: Number(row.megabytesPerSecond.toFixed(1)),
      crcMegabytesPerSecond: Number(row.crcMegabytesPerSecond.toFixed(1)),
      crcWholeMegabytesPerSecond: Number(row.crcWholeMegabytesPerSecond.toFixed(1)),
      crcRatio: Number(row.crcRatio.toFixed(3)),
      crcWholeRatio: Number(row.crcWholeRatio.toFixed(3)),
    })),
    targets,
    sink: sink & 1,
  }),
);
