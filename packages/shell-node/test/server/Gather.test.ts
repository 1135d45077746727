// Commands that arrive on different connections in the same poll phase join one drain: twenty
// inserts written on twenty sockets in one synchronous loop commit as one batch (the engine's
// watch hears each drain's commit once), and every caller still gets its own job.
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Server from "../../src/server/Server.js";

let directory = "";
let opened: EnginePromises.OpenedEngine;
let served: Server.StartedServer;

beforeAll(async () => {
  directory = join(mkdtempSync(join(tmpdir(), "tay-gather-")), "data");
  opened = await EnginePromises.open(directory, { createIfMissing: true });
  served = await Server.start(opened, { directory });
});

afterAll(async () => {
  await served.close();
  await opened.close();
  rmSync(join(directory, ".."), { recursive: true, force: true });
});

/**
 * A connection the server has accepted and reads: it answered a first
 * request on it (kept alive), so the inserts below are all that is left to read.
 */
const connected = (path: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = connect(path, () =>
      socket.write("GET /v1/next-wake-at HTTP/1.1\r\nhost: tay\r\n\r\n"),
    );
    let text = "";
    const first = (chunk: Buffer) => {
      text += chunk.toString();
      if (!text.endsWith("}\n")) return;
      socket.off("data", first);
      resolve(socket);
    };
    socket.on("data", first);
    socket.on("error", reject);
  });

/** The whole answer of a connection that asked `Connection: close`. */
const answerOf = (socket: Socket): Promise<string> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => resolve(Buffer.concat(chunks).toString()));
  });

const insertRequest = (n: number): string => {
  const body = JSON.stringify({ job: { queue: "gather", worker: "W", args: { n } } });
  return `POST /v1/insert HTTP/1.1\r\nhost: tay\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

describe("gathering", () => {
  it("decides concurrent requests of different connections in one drain", async () => {
    const sockets = await Promise.all(Array.from({ length: 20 }, () => connected(served.socket)));
    const commits: Array<number> = [];
    const unwatch = opened.engine.watch((records) => commits.push(records.length));
    const answers = sockets.map(answerOf);
    // Written before the server's loop runs again: all twenty are readable in one poll phase.
    for (const [index, socket] of sockets.entries()) socket.write(insertRequest(index));
    const texts = await Promise.all(answers);
    unwatch();
    const ids = texts.map((text) => {
      expect(text.startsWith("HTTP/1.1 200")).toBe(true);
      return Number(/"jobId":(\d+)/.exec(text)?.[1]);
    });
    expect(new Set(ids).size).toBe(20);
    expect(commits.reduce((sum, records) => sum + records, 0)).toBe(20);
    // One drain; a second only if the kernel handed the reads over two polls.
    expect(commits.length).toBeLessThanOrEqual(2);
  });
});
