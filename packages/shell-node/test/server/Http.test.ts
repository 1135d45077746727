// A command's body is taken in one read when it has all arrived, and read as a stream otherwise:
// bodies written on a raw socket whole, in pieces a few loop turns apart, at the limit and over it
// either way, each get the answer a whole body gets (the job, or 413 and the connection closed).
import { connect } from "node:net";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { servedForFile } from "../support/servedForFile.js";

const bodyBytesMax = 4_096;
const batchBodyBytesMax = 64 * 1024;

const file = servedForFile("tay-http-", { bodyBytesMax, batchBodyBytesMax });

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes `pieces` of one request with `gapMs` between them; the whole answer (the server closes). */
const exchange = (pieces: ReadonlyArray<string>, gapMs: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = [];
    const socket = connect(file.served.socket, async () => {
      for (const [index, piece] of pieces.entries()) {
        if (index > 0) await pause(gapMs);
        if (!socket.destroyed) socket.write(piece);
      }
    });
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", () => resolve(Buffer.concat(chunks).toString()));
    socket.on("error", reject);
  });

/** A request of `body` to `route`, cut into pieces at `cuts`. */
const postPieces = (route: string, body: string, cuts: ReadonlyArray<number>): Array<string> => {
  const head = `POST ${route} HTTP/1.1\r\nhost: tay\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const ends = [...cuts, body.length];
  return [head, ...ends.map((end, index) => body.slice(index === 0 ? 0 : ends[index - 1], end))];
};

const insertPieces = (args: string, cuts: ReadonlyArray<number>): Array<string> =>
  postPieces("/v1/insert", `{"job":{"queue":"http","worker":"W","args":${args}}}`, cuts);

/** An insert-many body of `count` jobs whose args are `text`. */
const batchBody = (count: number, text: string): string =>
  JSON.stringify({
    jobs: Array.from({ length: count }, () => ({ queue: "batch", worker: "W", args: text })),
  });

const statusOf = (answer: string): number => Number(answer.slice(9, 12));

const jobOf = (answer: string): unknown =>
  JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).job?.args;

describe("command bodies", () => {
  it("takes a body that came with its head", async () => {
    const answer = await exchange([insertPieces('{"n":1}', []).join("")], 0);
    expect(statusOf(answer)).toBe(200);
    expect(jobOf(answer)).toEqual({ n: 1 });
  });

  it("reads a body that arrives in pieces whole, however it is cut", async () => {
    for (const cuts of [[0], [1], [10, 20], [30]]) {
      const answer = await exchange(insertPieces('{"n":2,"text":"in pieces"}', cuts), 30);
      expect(statusOf(answer)).toBe(200);
      expect(jobOf(answer)).toEqual({ n: 2, text: "in pieces" });
    }
  });

  it("takes a body of exactly the limit, arrived whole or still arriving", async () => {
    const text = "x".repeat(
      bodyBytesMax - '{"job":{"queue":"http","worker":"W","args":""}}'.length,
    );
    // A header the lean path does not take: node:http reads these requests and their bodies.
    const viaNode = (pieces: ReadonlyArray<string>) =>
      pieces.map((piece, index) =>
        index === 0 ? piece.replace("\r\n", "\r\nx-via: node\r\n") : piece,
      );
    const cut = viaNode(insertPieces(JSON.stringify(text), [100]));
    for (const pieces of [[cut.join("")], cut]) {
      const answer = await exchange(pieces, 30);
      expect(statusOf(answer)).toBe(200);
      expect(jobOf(answer)).toBe(text);
    }
  });

  // One atomic batch is one record, as large as the engine takes embedded (2026-12-07): its
  // route has a limit of its own; every other route keeps `bodyBytesMax`.
  it("takes an insert-many body past bodyBytesMax up to batchBodyBytesMax, as one record", async () => {
    const body = batchBody(40, "y".repeat(1_000));
    expect(body.length).toBeGreaterThan(bodyBytesMax * 8);
    for (const cuts of [[], [100, 20_000]]) {
      const answer = await exchange(postPieces("/v1/insert-many", body, cuts), 30);
      expect(statusOf(answer)).toBe(200);
      const { jobs } = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as {
        jobs: Array<{ jobId: number }>;
      };
      expect(jobs).toHaveLength(40);
      // One record: a mutation of the forty inserts.
      const { lastSequence } = await Effect.runPromise(file.opened.log.stats());
      const [last] = await Effect.runPromise(file.opened.log.readFrom(lastSequence, 1));
      expect(last?.event._tag === "Mutation" && last.event.events.length).toBe(40);
    }
    // The same bytes on another route are over its limit.
    const single = await exchange(insertPieces(JSON.stringify("y".repeat(40_000)), []), 0);
    expect(statusOf(single)).toBe(413);
  });

  it("refuses an insert-many body past batchBodyBytesMax, saying what to do", async () => {
    const answer = await exchange(
      postPieces("/v1/insert-many", batchBody(70, "z".repeat(1_000)), []),
      0,
    );
    expect(statusOf(answer)).toBe(413);
    expect(answer).toContain('"_tag":"BodyTooLarge"');
    expect(answer).toContain(`over ${batchBodyBytesMax} bytes`);
    expect(answer).toContain("batchBodyBytesMax");
  });

  it("refuses a body over the limit, arrived whole or still arriving, and closes", async () => {
    const big = JSON.stringify("x".repeat(bodyBytesMax));
    for (const cuts of [[], [100]]) {
      const answer = await exchange(insertPieces(big, cuts), 30);
      expect(statusOf(answer)).toBe(413);
      expect(answer.toLowerCase()).toContain("connection: close");
      expect(answer).toContain('"_tag":"BodyTooLarge"');
    }
  });
});
