// The lean path answers whole simple requests itself and hands the rest, at a request boundary,
// to node:http: raw bytes on the Unix socket (pipelined, cut anywhere, handed over after lean
// ones, over the limit, garbage, stalled) each get the answers node:http gives, in order.
// Which path answered is read from the head: the lean path writes its header names in lower
// case (`date`), node:http its own `Date` capitalized (and its refusals of garbage none).
import { connect, type Socket } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { servedForFile } from "../support/servedForFile.js";

const bodyBytesMax = 4_096;

const file = servedForFile("tay-lean-", { bodyBytesMax });

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const request = (
  method: string,
  path: string,
  body = "",
  headers: ReadonlyArray<string> = [],
): string =>
  `${method} ${path} HTTP/1.1\r\nhost: tay\r\n${headers.map((line) => `${line}\r\n`).join("")}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

const heartbeat = (jobId: number, headers: ReadonlyArray<string> = []) =>
  request("POST", "/v1/heartbeat", JSON.stringify({ jobId, attempt: 1 }), headers);

/** One answer as read off the wire. */
interface Reply {
  readonly status: number;
  readonly head: string;
  readonly body: string;
  /** Answered by the lean path (its lower-case `connection` header), not by node:http. */
  readonly lean: boolean;
}

/** Splits the bytes a connection received into its answers (each states its length). */
const repliesOf = (bytes: Buffer): Array<Reply> => {
  const replies: Array<Reply> = [];
  let at = 0;
  while (at < bytes.length) {
    const end = bytes.indexOf("\r\n\r\n", at);
    if (end < 0) throw new Error(`a cut head: ${bytes.toString("latin1", at)}`);
    const head = bytes.toString("latin1", at, end);
    const length = Number(/content-length: *([0-9]+)/i.exec(head)?.[1] ?? "0");
    const body = bytes.toString("utf8", end + 4, end + 4 + length);
    const lean = head.includes("\r\ndate: ");
    replies.push({ status: Number(head.slice(9, 12)), head, body, lean });
    at = end + 4 + length;
  }
  return replies;
};

/**
 * Writes `pieces` on one connection (`gapMs` apart, so each is its own read), ends its side
 * after `endAfterMs` if given, and resolves with the answers once the server closes or
 * `count` answers have arrived.
 */
const exchange = (
  pieces: ReadonlyArray<string | Buffer>,
  options: { readonly gapMs?: number; readonly count?: number; readonly end?: boolean } = {},
): Promise<Array<Reply>> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = [];
    let done = false;
    const finish = (socket: Socket) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(repliesOf(Buffer.concat(chunks)));
    };
    const socket = connect(file.served.socket, async () => {
      for (const [index, piece] of pieces.entries()) {
        if (index > 0) await pause(options.gapMs ?? 5);
        if (!socket.destroyed) socket.write(piece);
      }
      if (options.end === true && !socket.destroyed) socket.end();
    });
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (options.count === undefined) return;
      try {
        if (repliesOf(Buffer.concat(chunks)).length >= options.count) finish(socket);
      } catch {
        // A head still arriving.
      }
    });
    socket.on("close", () => finish(socket));
    socket.on("error", reject);
  });

const tagOf = (reply: Reply): string => JSON.parse(reply.body).error?._tag ?? "";

const notHeld = JSON.stringify({ held: false, expiresAt: null });

describe("the lean path", () => {
  it("answers requests pipelined in one chunk, in order, itself", async () => {
    const replies = await exchange([[1, 2, 3].map((jobId) => heartbeat(jobId)).join("")], {
      count: 3,
    });
    expect(replies.map((reply) => [reply.status, reply.body.trimEnd(), reply.lean])).toEqual([
      [200, notHeld, true],
      [200, notHeld, true],
      [200, notHeld, true],
    ]);
  });

  it("answers a request cut at any byte, itself", async () => {
    const whole = request(
      "POST",
      "/v1/insert",
      JSON.stringify({ job: { queue: "lean", worker: "W", args: { cut: "é" } } }),
    );
    const bytes = Buffer.from(whole);
    for (let cut = 1; cut < bytes.length; cut += 1) {
      const [reply] = await exchange([bytes.subarray(0, cut), bytes.subarray(cut)], { count: 1 });
      expect([cut, reply?.status, reply?.lean]).toEqual([cut, 200, true]);
      expect(JSON.parse(reply?.body ?? "").job.args).toEqual({ cut: "é" });
    }
  });

  it("hands a connection to node:http at the first request it does not take, for good", async () => {
    const pipelined = [
      heartbeat(1),
      heartbeat(2),
      request("GET", "/v1/jobs/1"),
      heartbeat(3),
      request("GET", "/v1/counts"),
    ];
    for (const pieces of [[pipelined.join("")], pipelined]) {
      const replies = await exchange(pieces, { count: 5 });
      expect(replies.map((reply) => [reply.status, reply.lean])).toEqual([
        [200, true],
        [200, true],
        [200, false],
        [200, false],
        [200, false],
      ]);
      expect(replies[3]?.body.trimEnd()).toBe(notHeld);
    }
  });

  it("answers exactly as node:http does, by the same table and the same errors", async () => {
    const bodies = [
      JSON.stringify({ jobId: 7, attempt: 1 }),
      '{"jobId":',
      JSON.stringify({ jobId: "7", attempt: 1 }),
      "",
      "[1,2]",
    ];
    for (const body of bodies) {
      const [lean] = await exchange([request("POST", "/v1/heartbeat", body)], { count: 1 });
      // An unknown header is node:http's to read.
      const [node] = await exchange([request("POST", "/v1/heartbeat", body, ["x-other: 1"])], {
        count: 1,
      });
      expect([lean?.lean, node?.lean]).toEqual([true, false]);
      expect([lean?.status, lean?.body]).toEqual([node?.status, node?.body]);
      const closes = (reply: Reply | undefined) => /\r\nconnection: close/i.test(reply?.head ?? "");
      expect(closes(lean)).toBe(closes(node));
    }
  });

  it("closes after the answer to a request that asks it to, answering nothing after it", async () => {
    const pieces = [heartbeat(1, ["Connection: close"]) + heartbeat(2)];
    const replies = await exchange(pieces, { count: 2 });
    expect(replies.map((reply) => [reply.status, reply.lean])).toEqual([[200, true]]);
    expect(replies[0]?.head).toContain("\r\nconnection: close");
  });

  it("leaves a body over the limit to node:http: 413, closed", async () => {
    const big = request("POST", "/v1/insert", "x".repeat(bodyBytesMax + 1));
    for (const pieces of [[heartbeat(1), big], [heartbeat(1) + big]]) {
      const replies = await exchange(pieces);
      expect(replies.map((reply) => [reply.status, reply.lean])).toEqual([
        [200, true],
        [413, false],
      ]);
      expect(replies[1] && tagOf(replies[1])).toBe("BodyTooLarge");
      expect(replies[1]?.head.toLowerCase()).toContain("connection: close");
    }
  });

  it("answers garbage and stray bytes as node:http does: one typed line, 400, closed", async () => {
    const garbage = [
      "\x00\x01 not http at all\r\n\r\n",
      "POST /v1/heartbeat HTTP/1.1\r\nhost: t\x01ay\r\ncontent-length: 2\r\n\r\n{}",
      "POST /v1/heartbeat HTTP/1.1\r\nhost: tay\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}",
      "POST /v1/heartbeat HTTP/1.1\r\nhost: tay\r\ntransfer-encoding: chunked\r\ncontent-length: 2\r\n\r\n{}",
    ];
    for (const bytes of garbage) {
      const replies = await exchange([heartbeat(1), bytes]);
      expect(replies.map((reply) => [reply.status, reply.lean])).toEqual([
        [200, true],
        [400, false],
      ]);
      expect(
        tagOf(replies[1] ?? replies[0] ?? { status: 0, head: "", body: "{}", lean: false }),
      ).toBe("MalformedRequest");
    }
    // A request cut off by the client's end: the same refusal node:http's parser gives.
    const [cutOff] = await exchange([heartbeat(1).slice(0, 40)], { end: true });
    expect([cutOff?.status, cutOff && tagOf(cutOff)]).toEqual([400, "MalformedRequest"]);
  });

  it("hands a request left incomplete to node:http, which takes the rest", async () => {
    const whole = heartbeat(4);
    const replies = await exchange([heartbeat(1), whole.slice(0, 30), whole.slice(30)], {
      gapMs: 1_300,
      count: 2,
    });
    expect(replies.map((reply) => [reply.status, reply.lean])).toEqual([
      [200, true],
      [200, false],
    ]);
  });

  it("counts its answers in tay_request_seconds by route and status", async () => {
    const count = async () => {
      const [metrics] = await exchange([request("GET", "/metrics")], { count: 1 });
      const line =
        /tay_request_seconds_count\{route="\/v1\/heartbeat",status="400"\} ([0-9]+)/.exec(
          metrics?.body ?? "",
        );
      return Number(line?.[1] ?? "0");
    };
    const before = await count();
    const replies = await exchange(
      [1, 2].map(() => request("POST", "/v1/heartbeat", "{}")),
      { count: 2 },
    );
    expect(replies.map((reply) => [reply.status, reply.lean])).toEqual([
      [400, true],
      [400, true],
    ]);
    expect(await count()).toBe(before + 2);
  });

  it("gives up a waiting claim whose client left, so a job inserted later stays available", async () => {
    const socket = connect(file.served.socket);
    await new Promise((resolve) => socket.once("connect", resolve));
    const body = JSON.stringify({ lanes: [{ queue: "gone", limit: 1 }], waitMs: 20_000 });
    let answered = "";
    socket.on("data", (chunk: Buffer) => {
      answered += chunk.toString();
    });
    socket.write(request("POST", "/v1/next-jobs", body));
    await pause(100);
    socket.destroy();
    await pause(100);
    const job = await file.opened.insert({ queue: "gone", worker: "W", args: null });
    await pause(100);
    expect(answered).toBe("");
    expect(file.opened.job(job.jobId)?.state).toBe("available");
  });

  it("answers any pipelined run of requests, however its bytes are cut (property)", async () => {
    const requests = [
      heartbeat(1),
      heartbeat(2, ["x-tay-session: none", "Content-Type: application/json"]),
      request("GET", "/v1/counts"),
      request("POST", "/v1/heartbeat", "{}"),
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: requests.length - 1 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (picked, cuts) => {
          const bytes = Buffer.from(picked.map((index) => requests[index]).join(""));
          const ends = [...new Set(cuts.map((cut) => cut % bytes.length))].sort((a, b) => a - b);
          const pieces = [...ends, bytes.length].map((end, index) =>
            bytes.subarray(index === 0 ? 0 : (ends[index - 1] ?? 0), end),
          );
          const replies = await exchange(
            pieces.filter((piece) => piece.length > 0),
            { gapMs: 2, count: picked.length },
          );
          expect(replies.map((reply) => reply.status)).toEqual(
            picked.map((index) => (index === 3 ? 400 : 200)),
          );
          expect(replies.every((reply) => reply.lean)).toBe(true);
        },
      ),
      { numRuns: 60, seed: 20261204 },
    );
  });
});
