// The store+engine smoke of .ci/runtimes, run on each runtime from the
// installed packages: the Effect engine and the promise face insert, claim,
// complete and fail jobs under Maximal durability, the store is reopened
// (recovery reads every byte back), the states are checked, a second opener
// is refused with `Locked` naming this process, and the store verifies.
//
//   RUNTIME smoke.mjs DATA_DIR
import { Effect } from "effect";
import { Engine, EnginePromises, NodeDisk } from "@tay/shell-node";
import { crc32cImplementation } from "@tay/codec";

const [directory] = process.argv.slice(2);
if (directory === undefined) throw new Error("usage: smoke.mjs DATA_DIR");
const check = (condition, what) => {
  if (!condition) throw new Error(`smoke: ${what}`);
};

// Effect: 20 inserts, 10 claimed and completed, with a rotation or two.
const first = Effect.gen(function* () {
  const engine = yield* Engine.open(directory, {
    createIfMissing: true,
    durability: "Maximal",
    rotationTargetBytes: 4096,
  });
  const ids = [];
  for (let index = 0; index < 20; index++) {
    const job = yield* engine.insert({
      queue: "smoke",
      worker: "W",
      args: { index, pad: "x".repeat(200) },
    });
    ids.push(job.jobId);
  }
  const claimed = yield* engine.claim("smoke", 10);
  for (const job of claimed) yield* engine.complete(job.jobId, { done: job.jobId });
  return ids;
}).pipe(Effect.scoped, Effect.provide(NodeDisk.layer));
const ids = await Effect.runPromise(first);

// Promises: reopen, read back, fail one, and see a second opener refused.
const tay = await EnginePromises.open(directory, {});
try {
  const states = ids.map((id) => tay.job(id)?.state);
  check(states.filter((state) => state === "completed").length === 10, `after reopen: ${states}`);
  check(states.filter((state) => state === "available").length === 10, `after reopen: ${states}`);
  const refusal = await EnginePromises.open(directory, {}).then(
    () => null,
    (error) => error,
  );
  check(refusal?._tag === "Locked", `a second opener: ${refusal}`);
  check(refusal.holder?.pid === process.pid, `the holder named: ${JSON.stringify(refusal.holder)}`);
  const [claimed] = await tay.claim("smoke");
  check(claimed !== undefined, "nothing to claim");
  await tay.fail(claimed.jobId, "smoke failure", { discard: true });
  check(
    tay.job(claimed.jobId)?.state === "discarded",
    `failed job: ${tay.job(claimed.jobId)?.state}`,
  );
} finally {
  await tay.close();
}

const reopened = await EnginePromises.open(directory, {});
const discarded = ids.filter((id) => reopened.job(id)?.state === "discarded").length;
await reopened.close();
check(discarded === 1, `discarded after the second reopen: ${discarded}`);
console.log(
  `smoke: insert, claim, complete, fail, reopen twice, Locked names this pid: passed (CRC-32C ${crc32cImplementation})`,
);
