/**
 * `GET /v1/jobs/ID/history` over a served store's socket, for the history
 * tests: each event as (sequence, member, event tag, fields).
 */
import { request } from "node:http";

export type HistoryRow = [number, number, string, unknown];

/** The history route's events for `jobId`, asked over `socket`. */
export const historyOf = (socket: string, jobId: number): Promise<Array<HistoryRow>> =>
  new Promise((resolve, reject) => {
    const asked = request({ socketPath: socket, path: `/v1/jobs/${jobId}/history` }, (answer) => {
      const chunks: Array<Buffer> = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as {
          events: Array<{ sequence: number; member: number; event: string; fields: unknown }>;
        };
        resolve(body.events.map((e) => [e.sequence, e.member, e.event, e.fields]));
      });
    });
    asked.on("error", reject);
    asked.end();
  });
