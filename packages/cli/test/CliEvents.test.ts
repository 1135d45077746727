// `tay events DIR` follows what commits to a served store (the server LOCK names), one JSON line
// per committed event: replayed from `--from`, then live as it commits, `--limit` of them; the
// server's end of the stream is reported with the last sequence printed (its refusals of a store
// no server holds and of a URL are tested with `tay health`'s). The holder here is this test
// process (engine and server in process), the command runs in process too (its lines as written).
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { EnginePromises, Server } from "@tay/shell-node";
import { ok, runRecorded, temporaryRoot } from "./support/cli.js";

const rootOf = temporaryRoot({ built: true });

const parsedLines = (stdout: string): Array<Record<string, unknown>> =>
  stdout
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line));

describe("tay events", () => {
  it("replays from --from, then prints what commits as it commits, --limit events", async () => {
    const directory = path.join(rootOf(), "served");
    const opened = await EnginePromises.open(directory, { createIfMissing: true });
    const served = await Server.start(opened, { directory });
    try {
      // Two records: one insert alone, then two in one mutation.
      await opened.insert({ queue: "q", worker: "W", args: 1 });
      await opened.insertMany([
        { queue: "q", worker: "W", args: 2 },
        { queue: "q", worker: "W", args: 3 },
      ]);
      const replayed = await runRecorded(["events", directory, "--from", "1", "--limit", "3"]);
      expect(replayed.stderr).toBe("");
      expect(replayed.status).toBe(0);
      const lines = parsedLines(replayed.stdout);
      expect(lines.map(({ sequence, member, event }) => [sequence, member, event])).toEqual([
        [1, 0, "JobInserted"],
        [2, 0, "JobInserted"],
        [2, 1, "JobInserted"],
      ]);
      // The same fields `tay dump` shows for the record (its mutation's inner events).
      const dumped = parsedLines(await ok(["dump", directory, "--from", "2", "--limit", "1"]));
      expect(dumped[0]?.fields).toEqual({
        events: lines
          .slice(1)
          .map(({ type, schema, event, fields }) => ({ type, schema, event, fields })),
      });
      // Live: from the next commit, one line per event as it commits.
      const live = runRecorded(["events", directory, "--limit", "2"]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const inserted = await opened.insert({ queue: "live", worker: "W", args: "x" });
      const [claimed] = await opened.claim("live");
      const followed = await live;
      expect(followed.status).toBe(0);
      expect(parsedLines(followed.stdout).map(({ event, fields }) => [event, fields])).toEqual([
        ["JobInserted", expect.objectContaining({ job_id: inserted.jobId, queue: "live" })],
        ["JobStarted", expect.objectContaining({ job_id: claimed?.jobId, attempt: 1 })],
      ]);
      // The server goes away: the stream's end is reported, naming where to go on from.
      const ending = runRecorded(["events", directory, "--from", "1"]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await served.close();
      const ended = await ending;
      expect(ended.status).toBe(1);
      // A server that closes drops the stream's connection (or ends it): either way, where to go on from.
      expect(ended.stderr).toMatch(
        /^tay: (ConnectionFailed|StreamEnded) \S+: through the store's server: .*(the last event printed was of sequence 4|after sequence 4); tay events --from 5 goes on from there\n$/,
      );
      expect(parsedLines(ended.stdout)).toHaveLength(5);
    } finally {
      await served.close();
      await opened.close();
    }
  }, 60_000);
});
