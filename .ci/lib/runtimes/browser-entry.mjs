// The browser check's program, bundled with esbuild for the browser and run
// in chromium by browser.mjs: it decodes FORMAT.md's test vectors with
// @tay/codec and folds a history (the vector's JobInserted, then a claim and
// a completion decided by @tay/core) into a state. It sets
// `globalThis.tayBrowserCheck` to what it found; browser.mjs compares.
import { Decide, Evolve, State } from "@tay/core";
import {
  crc32c,
  crc32cImplementation,
  decodeCurrentPointer,
  decodeEvent,
  decodeRecord,
  decodeSegmentHeader,
  decodeValue,
  encodeEvent,
} from "@tay/codec";

const hex = (text) => Uint8Array.from(text.match(/../g), (pair) => Number.parseInt(pair, 16));
const vectors = {
  current: "5441594301000000000102030405060708090a0b0c0d0e0f00000000000000017e613694",
  header:
    "544159530100000000000000000000010000000000000001000102030405060708090a0b0c0d0e0fac6a89d0",
  value: "070000000304bfe00000000000000500000002c3a90600000000",
  record:
    "54415900010100010000000000000001000000a5d35091c108000000080000000461726773000000000b696e7365727465645f6174030000000000000000000000066a6f625f69640300000000000000010000000c6d61785f617474656d707473030000000000000001000000087072696f72697479030000000000000000000000057175657565050000000764656661756c740000000c7363686564756c65645f617403000000000000000000000006776f726b657205000000015794d8a272",
};

const right = (either, what) => {
  if (either._tag !== "Right") throw new Error(`${what}: ${JSON.stringify(either.left)}`);
  return either.right;
};

const run = () => {
  const current = right(decodeCurrentPointer(hex(vectors.current)), "CURRENT");
  const header = right(decodeSegmentHeader(hex(vectors.header)), "segment header");
  const value = right(decodeValue(hex(vectors.value)), "value");
  const decoded = decodeRecord(hex(vectors.record), 0);
  if (decoded._tag !== "Record") throw new Error(`record: ${JSON.stringify(decoded)}`);
  const { type, schema, payload } = decoded.record;
  const inserted = right(decodeEvent(type, schema, payload), "record payload");

  let state = right(Evolve.fold([inserted]), "fold of the inserted job");
  const history = [inserted];
  for (const command of [
    { _tag: "ClaimJobs", now: 10, queue: "default", limit: 1 },
    { _tag: "CompleteJob", now: 20, jobId: 1, result: "done" },
  ]) {
    for (const event of right(Decide.decide(state, command), command._tag)) {
      const encoded = right(encodeEvent(event), `encode ${event._tag}`);
      history.push(right(decodeEvent(encoded.type, encoded.schema, encoded.payload), "re-decode"));
    }
    state = right(Evolve.fold(history), `fold after ${command._tag}`);
  }
  const job = State.job(state, 1);
  return {
    crc32c: {
      implementation: crc32cImplementation,
      check: crc32c(new TextEncoder().encode("123456789")),
    },
    current: { epoch: current.epoch },
    header: { segmentId: header.segmentId, firstSequence: header.firstSequence },
    value: [value[0], value[1], value[2] instanceof Uint8Array ? value[2].length : "not bytes"],
    inserted: { tag: inserted._tag, jobId: inserted.jobId, queue: inserted.queue },
    history: history.map((event) => event._tag),
    job: { state: job?.state, attempt: job?.attempt },
  };
};

try {
  globalThis.tayBrowserCheck = { ok: true, result: run() };
} catch (error) {
  globalThis.tayBrowserCheck = { ok: false, error: String(error?.stack ?? error) };
}
