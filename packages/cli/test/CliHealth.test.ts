// `tay health DIR` asks the server that holds the store (LOCK names it) whether the store takes
// appends: exit 0 with a line (or JSON) while it does; exit 1 with the server's `Unhealthy` once
// the store under the server closed; exit 1 `NotServed` for a store no server holds; a URL is a
// usage error. The holder here is this test process (engine and server in process).
import * as path from "node:path";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { EnginePromises, Server } from "@tay/shell-node";
import { expectFailure, json, ok, tay, temporaryRoot } from "./support/cli.js";

const rootOf = temporaryRoot({ built: true });

describe("tay health", () => {
  it("answers healthy through the holder's server, then Unhealthy once its store closed", async () => {
    const directory = path.join(rootOf(), "served");
    const opened = await EnginePromises.open(directory, { createIfMissing: true });
    const served = await Server.start(opened, { directory });
    try {
      expect(await ok(["health", directory])).toMatch(
        /^healthy: the store takes appends \(log open, pressure 0\.\d{3}; server pid \d+\)\n$/,
      );
      expect(await json(["health", directory, "--json"])).toEqual({
        ok: true,
        log: "open",
        pressure: expect.any(Number),
      });
      await Effect.runPromise(opened.engine.close());
      const line = expectFailure(await tay(["health", directory]), "Unhealthy");
      expect(line).toMatch(/the store refuses appends: StoreClosed/);
    } finally {
      await served.close();
      await opened.close();
    }
  }, 60_000);

  // `tay events` asks the server as `tay health` does, and refuses alike.
  it("refuses a store no server holds, and a URL (tay health and tay events)", async () => {
    const directory = path.join(rootOf(), "at-rest");
    await ok(["init", directory]);
    for (const [command, atRest] of [
      ["health", "tay verify checks a store at rest"],
      ["events", "tay dump shows its records at rest"],
    ] as const) {
      const line = expectFailure(await tay([command, directory]), "NotServed");
      expect(line).toContain(`no server holds this store; start one with tay serve; ${atRest}`);
      expectFailure(await tay([command, "postgres://127.0.0.1/x"]), "UsageError", 2);
    }
  }, 60_000);
});
