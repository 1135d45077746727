// `GET /v1/changes` tells a reader that something committed, at most once each `?intervalMs=`,
// with the last committed sequence: a burst of commits is a few events, the last naming the log's
// last sequence; no commit, no event; an interval out of 10..60,000 is refused naming the field.
import { type ClientRequest, request } from "node:http";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { servedForFile } from "../support/servedForFile.js";

const file = servedForFile("tay-changes-");

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Changes {
  /** The sequences told, in order. */
  readonly told: Array<number>;
  readonly status: number;
  readonly close: () => void;
}

/** Opens `/v1/changes` with `query`; resolves once its head arrived. */
const openChanges = (query: string): Promise<Changes> =>
  new Promise((resolve, reject) => {
    const told: Array<number> = [];
    let sent: ClientRequest | undefined;
    sent = request({ socketPath: file.served.socket, path: `/v1/changes${query}` }, (answer) => {
      let buffered = "";
      answer.on("data", (chunk: Buffer) => {
        buffered += chunk.toString();
        for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (/^event: changed$/m.test(block) && data !== undefined) {
            told.push(JSON.parse(data).sequence);
          }
        }
      });
      resolve({ told, status: answer.statusCode ?? 0, close: () => sent?.destroy() });
    });
    sent.on("error", reject);
    sent.end();
  });

describe("/v1/changes", () => {
  it("tells a burst of commits as a few events, the last naming the last sequence", async () => {
    const changes = await openChanges("?intervalMs=50");
    expect(changes.status).toBe(200);
    await pause(100);
    // Nothing committed yet: nothing told.
    expect(changes.told).toEqual([]);
    const started = Date.now();
    for (let index = 0; index < 200; index++) {
      await file.opened.insert({ queue: "q", worker: "W", args: index });
    }
    const elapsed = Date.now() - started;
    await pause(150);
    const { lastSequence } = await Effect.runPromise(file.opened.log.stats());
    expect(changes.told.length).toBeGreaterThan(0);
    // At most one each 50 ms (and one for the last), never one per commit.
    expect(changes.told.length).toBeLessThanOrEqual(Math.ceil(elapsed / 50) + 2);
    expect(changes.told.length).toBeLessThan(200);
    expect(changes.told.at(-1)).toBe(lastSequence);
    expect([...changes.told].sort((a, b) => a - b)).toEqual(changes.told);
    // Quiet again: nothing more told.
    const count = changes.told.length;
    await pause(150);
    expect(changes.told).toHaveLength(count);
    changes.close();
  });

  it("refuses an interval out of 10..60,000 ms, naming the field", async () => {
    for (const query of ["?intervalMs=5", "?intervalMs=x", "?intervalMs=60001"]) {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const sent = request(
          { socketPath: file.served.socket, path: `/v1/changes${query}` },
          (response) => {
            let body = "";
            response.on("data", (chunk: Buffer) => {
              body += chunk.toString();
            });
            response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
          },
        );
        sent.on("error", reject);
        sent.end();
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toContain('"field":"query.intervalMs"');
    }
  });
});
