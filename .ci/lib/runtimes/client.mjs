// The client smoke of .ci/runtimes, run on each runtime against a server
// Node started (`tay serve DATA_DIR`): `@tay/client` finds the socket
// through LOCK, inserts alone and in a batch (concurrent inserts share one
// request), claims and completes with the attempt, reads a job and the
// counts, sees a refusal by its tag, and follows the committed event stream.
//
//   RUNTIME client.mjs DATA_DIR QUEUE
import { Client } from "@tay/client";

const [directory, queue] = process.argv.slice(2);
if (directory === undefined || queue === undefined) {
  throw new Error("usage: client.mjs DATA_DIR QUEUE");
}
const check = (condition, what) => {
  if (!condition) throw new Error(`client: ${what}`);
};

const tay = await Client.connect(directory);
const alone = await tay.insert({ queue, worker: "W", args: { big: 2n ** 60n, n: 0 } });
check(alone.args.get("big") === 2n ** 60n, `args came back as ${[...alone.args]}`);
const batch = await Promise.all(
  Array.from({ length: 20 }, (_, n) => tay.insert({ queue, worker: "W", args: { n: n + 1 } })),
);
check(
  batch.every((job, index) => job.jobId === alone.jobId + index + 1),
  `batched ids ${batch.map((job) => job.jobId)}`,
);
const [claimed] = await tay.claim(queue);
check(claimed?.jobId === alone.jobId, `claimed ${claimed?.jobId}`);
const done = await tay.complete(alone.jobId, { ok: true }, { attempt: 1 });
check(done.state === "completed", `completed as ${done.state}`);
const late = await tay.complete(alone.jobId, null, { attempt: 1 }).catch((error) => error);
check(late._tag === "Rejected", `a second complete was ${late._tag}`);
check((await tay.job(alone.jobId))?.result?.value.get("ok") === true, "the result read back");
check((await tay.counts()).get(queue)?.available === 20, "20 available");
const status = await tay.status();
const subscription = tay.subscribe({ from: Number(status.lastSequence) });
const first = await subscription.next();
subscription.close();
check(first.value?.sequence === Number(status.lastSequence), "the event stream from a sequence");
await tay.close();
console.log(
  `client: inserted 21 (20 in one batch), completed 1, refused a late complete, streamed`,
);
