// Where a server listens and who may talk to it: a data directory too deep for a socket address
// serves from the private fallback that clients find through LOCK (or by the same computation),
// the socket is 0600 and leaves with the server, and a rotated token replaces the old one at once;
// a socket path of exactly the limit stays inside the directory.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, Locate } from "@tay/client";
import { describe, expect, it } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Server from "../../src/server/Server.js";
import * as Token from "../../src/server/Token.js";

const status = (host: string, port: number, token: string): Promise<number> =>
  new Promise((resolve, reject) => {
    request(
      { host, port, path: "/v1/counts", headers: { authorization: `Bearer ${token}` } },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    )
      .on("error", reject)
      .end();
  });

describe("listeners", () => {
  it("keeps the socket inside a directory whose path fits exactly, and falls back one byte over", () => {
    const root = join(tmpdir(), "tay-fit-");
    const fill = Locate.socketPathBytesMax - Buffer.byteLength(join(root, Locate.socketName));
    const fits = `${root}${"f".repeat(fill)}`;
    expect(Locate.socketPathFor(fits)).toBe(join(fits, Locate.socketName));
    expect(Buffer.byteLength(Locate.socketPathFor(fits))).toBe(Locate.socketPathBytesMax);
    const over = `${fits}f`;
    expect(Locate.socketPathFor(over).startsWith(Locate.fallbackDirectory())).toBe(true);
  });

  it("serves a deep directory from the fallback socket, found through LOCK and without it", async () => {
    const root = mkdtempSync(join(tmpdir(), "tay-deep-"));
    const directory = join(root, "a".repeat(60), "b".repeat(60), "data");
    mkdirSync(join(directory, ".."), { recursive: true });
    const opened = await EnginePromises.open(directory, { createIfMissing: true });
    const served = await Server.start(opened, { directory });
    try {
      expect(served.socket.startsWith(Locate.fallbackDirectory())).toBe(true);
      expect(Buffer.byteLength(served.socket)).toBeLessThan(108);
      expect(statSync(served.socket).mode & 0o777).toBe(0o600);
      expect(statSync(Locate.fallbackDirectory()).mode & 0o077).toBe(0);
      expect(JSON.parse(readFileSync(join(directory, "LOCK"), "utf8")).server.socket).toBe(
        served.socket,
      );
      expect(Locate.socketPathFor(directory)).toBe(served.socket);
      const client = await Client.connect(directory);
      await client.insert({ queue: "deep", worker: "W", args: null });
      await client.close();
    } finally {
      await served.close();
      await opened.close();
    }
    expect(() => statSync(served.socket)).toThrow();
    expect(JSON.parse(readFileSync(join(directory, "LOCK"), "utf8")).server).toBeUndefined();
    rmSync(root, { recursive: true, force: true });
  });

  it("takes a rotated token at once and refuses the old one", async () => {
    const directory = join(mkdtempSync(join(tmpdir(), "tay-token-")), "data");
    const opened = await EnginePromises.open(directory, { createIfMissing: true });
    const served = await Server.start(opened, { directory, listen: "0" });
    try {
      const [host = "", port = ""] = (served.listen ?? "").split(":");
      expect(host).toBe("127.0.0.1");
      expect(statSync(Token.tokenPath(directory)).mode & 0o777).toBe(0o600);
      const old = served.token ?? "";
      expect(await status(host, Number(port), old)).toBe(200);
      const rotated = await Token.rotate(directory);
      expect(await status(host, Number(port), rotated)).toBe(200);
      expect(await status(host, Number(port), old)).toBe(401);
    } finally {
      await served.close();
      await opened.close();
      rmSync(join(directory, ".."), { recursive: true, force: true });
    }
  });
});
