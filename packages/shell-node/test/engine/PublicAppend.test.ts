// Proves that no public path of @tay/shell-node appends a record the engine's deciders did not
// produce: a walk of everything the package's entries export, and of every object an opened
// engine hands out (both faces, the log view, the report), finds no function that takes records
// to append; and the attack that used to break a store (a raw `JobStarted` appended beside the
// engine, then a second claim) has no way in, so the store still reopens.
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Package from "../../src/index.js";
import * as Testing from "../../src/testing.js";

/** Names a raw append goes by, in this code base and in the ones it learned from. */
const appendNames = /^(append|appendAll|submit|enqueue|write(Records|Events)?|push|put)$/i;

/**
 * Every (path, function) reachable from `root` through own properties of
 * objects and namespaces, without calling anything. Classes (error types,
 * tags) count as functions but are not entered.
 */
const reachableFunctions = (root: unknown, rootName: string): Array<string> => {
  const found: Array<string> = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown, at: string, depth: number): void => {
    if (depth > 6 || value === null || seen.has(value)) return;
    if (typeof value === "function") {
      found.push(at);
      return;
    }
    if (typeof value !== "object") return;
    seen.add(value);
    for (const key of Object.keys(value)) {
      visit(Reflect.get(value, key), `${at}.${key}`, depth + 1);
    }
  };
  visit(root, rootName, 0);
  return found;
};

const leafName = (at: string): string => at.slice(at.lastIndexOf(".") + 1);

let root = "";
beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "tay-public-append-"));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe("the public API", () => {
  it("exports no function that appends records", () => {
    const exported = [
      ...reachableFunctions(Package, "@tay/shell-node"),
      ...reachableFunctions(Testing, "@tay/shell-node/testing"),
    ];
    // The walk sees the package (a few hundred functions), or it proves nothing.
    expect(exported.length).toBeGreaterThan(100);
    expect(exported.filter((at) => appendNames.test(leafName(at)))).toEqual([]);
    // The raw store and the file log stay internal.
    expect(Object.keys(Package)).not.toContain("Store");
    expect(Object.keys(Package)).not.toContain("FileLog");
  });

  it("hands out engines whose every reachable function decides before it appends", async () => {
    const directory = path.join(root, "engine");
    const engine = await EnginePromises.open(directory, { createIfMissing: true });
    try {
      const handedOut = reachableFunctions(engine, "engine");
      expect(handedOut).toContain("engine.insert");
      expect(handedOut).toContain("engine.log.readFrom");
      expect(handedOut.filter((at) => appendNames.test(leafName(at)))).toEqual([]);
      expect(Object.keys(engine.engine)).not.toContain("store");
      // Every function reachable on the engine is one of its commands, queries or reads.
      const allowed = new Set([
        ...Object.keys(engine.engine),
        ...Object.keys(engine.engine.log),
        ...Object.keys(engine.engine.promises),
        "close",
      ]);
      for (const at of handedOut) expect(allowed.has(leafName(at)), at).toBe(true);
    } finally {
      await engine.close();
    }
  });

  it("keeps the store openable after what used to break it", async () => {
    const directory = path.join(root, "attack");
    const engine = await EnginePromises.open(directory, { createIfMissing: true });
    const job = await engine.insert({ queue: "q", worker: "W", args: null });
    const [first] = await engine.claim("q");
    expect(first?.jobId).toBe(job.jobId);
    // The only way to start the job again is the engine's claim, which the decider refuses to
    // repeat: nothing is claimable, nothing is appended.
    const before = (await Effect.runPromise(engine.log.stats())).lastSequence;
    expect(await engine.claim("q")).toEqual([]);
    expect((await Effect.runPromise(engine.log.stats())).lastSequence).toBe(before);
    await engine.close();
    const reopened = await EnginePromises.open(directory, { rescueOnOpen: false });
    expect(reopened.job(job.jobId)?.state).toBe("executing");
    await reopened.close();
  });
});
