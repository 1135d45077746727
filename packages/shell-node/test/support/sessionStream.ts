/**
 * A worker session opened by hand over a server's socket (`GET
 * /v1/session`), for the server's tests: its id, and the job ids of the
 * `ended` events it is told, as they come.
 */
import { request } from "node:http";

export interface SessionStream {
  readonly id: string;
  readonly ended: Array<number>;
  readonly close: () => void;
}

export const openSession = (socketPath: string): Promise<SessionStream> =>
  new Promise((resolve, reject) => {
    const ended: Array<number> = [];
    const sent = request({ socketPath, path: "/v1/session" }, (response) => {
      let buffered = "";
      let id: string | undefined;
      response.on("data", (chunk: Buffer) => {
        buffered += chunk.toString();
        for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data === undefined) continue;
          const parsed = JSON.parse(data);
          if (block.startsWith("event: session")) {
            id = parsed.session;
            resolve({ id: parsed.session, ended, close: () => sent.destroy() });
          } else if (id !== undefined && block.startsWith("event: ended")) {
            ended.push(parsed.fields.jobId);
          }
        }
      });
    });
    sent.on("error", reject);
    sent.end();
  });
