// Health for liveness checks: an engine is healthy while its log takes appends and unhealthy once
// its writer failed or it closed (the reason named), as `GET /v1/health` answers it (200, then 503
// `Unhealthy`); a worker tells where it is: running, paused, halted once the engine refused its
// claim, closing, closed.
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, type Scope } from "effect";
import { describe, expect, it } from "vitest";
import type { Disk } from "../../src/disk/Disk.js";
import * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as Engine from "../../src/engine/Engine.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Server from "../../src/server/Server.js";
import * as Init from "../../src/store/Init.js";
import * as Worker from "../../src/worker/Worker.js";

const until = async (ready: () => boolean): Promise<void> => {
  for (let tries = 0; tries < 1_000 && !ready(); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (!ready()) throw new Error("the condition never held");
};

const tagOf = (error: unknown): unknown =>
  typeof error === "object" && error !== null ? Reflect.get(error, "_tag") : error;

/** GET a path of a TCP listener with the token: the status and the parsed body. */
const fetchJson = (listen: string, token: string, path: string) =>
  new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const [host, port] = listen.split(":");
    const call = request(
      { host, port: Number(port), path, headers: { authorization: `Bearer ${token}` } },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }),
        );
      },
    );
    call.on("error", reject);
    call.end();
  });

describe("engine health and worker state", () => {
  it("is ok while the log takes appends, and names the failure once the writer failed", async () => {
    const disk = FaultDisk.make();
    const run = <A, E>(program: Effect.Effect<A, E, Disk | Scope.Scope>) =>
      Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(FaultDisk.layer(disk))));
    await run(Init.init("/data"));
    const seen = await run(
      Effect.gen(function* () {
        const engine = yield* Engine.open("/data", { timers: false });
        const healthy = yield* engine.health();
        const worker = yield* Worker.run(engine, { queues: { q: 1 }, handlers: { W: () => 1 } });
        const running = worker.state();
        yield* worker.pause();
        const paused = worker.state();
        yield* worker.resume();
        disk.inject(FaultDisk.fail("write", "EIO"));
        const refused = yield* Effect.promise(() =>
          engine.promises.insert({ queue: "q", worker: "W", args: null }).then(
            () => "inserted",
            (error: unknown) => tagOf(error),
          ),
        );
        yield* Effect.promise(() => until(() => worker.state() === "halted"));
        const unhealthy = engine.promises.health();
        const closing = Effect.runFork(worker.close());
        const whileClosing = worker.state();
        yield* Effect.promise(() => Effect.runPromise(closing.await));
        return {
          healthy,
          running,
          paused,
          refused,
          unhealthy,
          whileClosing,
          closed: worker.state(),
        };
      }),
    );
    expect(seen.healthy).toEqual({ ok: true, log: "open", reason: null });
    expect(seen.running).toBe("running");
    expect(seen.paused).toBe("paused");
    expect(seen.refused).toBe("WriterFailed");
    expect(seen.unhealthy).toMatchObject({ ok: false, log: "refused" });
    expect(seen.unhealthy.reason).toMatch(/^WriterFailed /);
    expect(seen.whileClosing).toBe("closing");
    expect(seen.closed).toBe("closed");
  }, 60_000);

  it("is answered by GET /v1/health: 200, then 503 Unhealthy once the store closed under it", async () => {
    const root = mkdtempSync(join(tmpdir(), "tay-health-"));
    const directory = join(root, "data");
    const opened = await EnginePromises.open(directory, { createIfMissing: true });
    const served = await Server.start(opened, { directory, listen: "127.0.0.1:0" });
    try {
      const listen = served.listen ?? "";
      const token = served.token ?? "";
      expect(await fetchJson(listen, token, "/v1/health")).toEqual({
        status: 200,
        body: { ok: true, log: "open", pressure: expect.any(Number) },
      });
      await Effect.runPromise(opened.engine.close());
      const after = await fetchJson(listen, token, "/v1/health");
      expect(after.status).toBe(503);
      expect(after.body).toMatchObject({ error: { _tag: "Unhealthy" } });
      expect(JSON.stringify(after.body)).toMatch(/the store refuses appends: StoreClosed/);
    } finally {
      await served.close();
      await opened.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
