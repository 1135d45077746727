// Bad requests against an in-process server on a real store: each kind of refusal is a 4xx with one
// typed JSON line and appends nothing; a stalled client stalls nobody; 10,000 random and mutated
// requests leave the server answering and the store verifying (Recovery.inspect).
import { connect } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as NodeDisk from "../../src/disk/NodeDisk.js";
import * as EnginePromises from "../../src/engine/EnginePromises.js";
import * as Server from "../../src/server/Server.js";
import * as Recovery from "../../src/store/Recovery.js";
import * as StateProjection from "../../src/store/StateProjection.js";

let directory = "";
let opened: EnginePromises.OpenedEngine;
let served: Server.StartedServer;

interface Reply {
  readonly status: number;
  readonly text: string;
}

const send = (
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
  tcp = false,
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const [host, port] = (served.listen ?? ":").split(":");
    const where = tcp ? { host, port: Number(port) } : { socketPath: served.socket };
    const sent = request({ ...where, method, path, headers }, (response) => {
      const chunks: Array<Buffer> = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
      );
    });
    sent.on("error", reject);
    sent.end(body);
  });

const lastSequence = () =>
  Effect.runSync(Effect.map(opened.log.stats(), (stats) => stats.lastSequence));

beforeAll(async () => {
  directory = join(mkdtempSync(join(tmpdir(), "tay-badinput-")), "data");
  opened = await EnginePromises.open(directory, { createIfMissing: true });
  served = await Server.start(opened, {
    directory,
    listen: "127.0.0.1:0",
    bodyBytesMax: 64 * 1024,
  });
});

afterAll(async () => {
  await served.close();
  await opened.close();
  rmSync(join(directory, ".."), { recursive: true, force: true });
});

const refusal = (reply: Reply) => {
  const lines = reply.text.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? "").error as { _tag: string; message: string; field?: string };
};

describe("bad input", () => {
  it("answers each kind of bad request with one typed JSON line and appends nothing", async () => {
    await opened.insert({ queue: "q", worker: "W", args: null });
    const before = lastSequence();
    const cases: ReadonlyArray<[Promise<Reply>, number, string]> = [
      [send("POST", "/v1/insert", '{"job":'), 400, "MalformedJson"],
      [send("POST", "/v1/insert", Buffer.from([0xff, 0xfe])), 400, "MalformedJson"],
      [
        send("POST", "/v1/insert", JSON.stringify({ job: { queue: 3, worker: "W" } })),
        400,
        "InvalidRequest",
      ],
      [send("POST", "/v1/insert", "x".repeat(70 * 1024)), 413, "BodyTooLarge"],
      [send("GET", "/v1/nowhere"), 404, "UnknownRoute"],
      [send("GET", "/v1/insert"), 405, "MethodNotAllowed"],
      [send("GET", "/v1/jobs?limit=-1"), 400, "InvalidRequest"],
      [send("POST", "/v1/complete", JSON.stringify({ jobId: 99 })), 409, "Rejected"],
      [send("GET", "/v1/counts", undefined, {}, true), 401, "Unauthorized"],
      [
        send("GET", "/v1/counts", undefined, { authorization: "Bearer wrong" }, true),
        401,
        "Unauthorized",
      ],
    ];
    for (const [reply, status, tag] of cases) {
      const answered = await reply;
      expect(answered.status).toBe(status);
      expect(refusal(answered)._tag).toBe(tag);
    }
    expect(
      refusal(await send("POST", "/v1/insert", JSON.stringify({ job: { queue: 3 } }))).field,
    ).toBe("body.job.queue");
    expect(lastSequence()).toBe(before);
  });

  it("takes a schedule's time zone and catch-up policy as the engine does, refusing bad ones by field", async () => {
    const register = (scheduleId: string, fields: Record<string, unknown>) =>
      send(
        "POST",
        "/v1/register-schedule",
        JSON.stringify({
          scheduleId,
          definition: { queue: "s", worker: "W", cron: "0 3 * * *", ...fields },
        }),
      );
    const berlin = await register("berlin", {
      timezone: "Europe/Berlin",
      catchUp: "all",
      catchUpWindowMs: 3_600_000,
    });
    expect(berlin.status).toBe(200);
    expect(JSON.parse(berlin.text).schedule.definition).toMatchObject({
      timezone: "Europe/Berlin",
      catchUp: "all",
      catchUpWindowMs: 3_600_000,
    });
    expect(opened.schedule("berlin")?.definition).toMatchObject({
      timezone: "Europe/Berlin",
      catchUp: "all",
      catchUpWindowMs: 3_600_000,
    });
    // Any one v3 field makes it v3, the others defaulting as in process (a null window included).
    expect((await register("window", { catchUpWindowMs: null })).status).toBe(200);
    expect(opened.schedule("window")?.definition).toMatchObject({
      timezone: "UTC",
      catchUp: "once",
      catchUpWindowMs: null,
    });
    // None of them: a v2 schedule, answered without them.
    const plain = await register("plain", {});
    expect(JSON.parse(plain.text).schedule.definition.timezone).toBeUndefined();
    expect(opened.schedule("plain")?.definition).not.toHaveProperty("timezone");

    const before = lastSequence();
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ timezone: "Mars/Olympus_Mons" }, "body.definition.timezone"],
      [{ timezone: 1 }, "body.definition.timezone"],
      [{ catchUp: "sometimes" }, "body.definition.catchUp"],
      [{ catchUp: true }, "body.definition.catchUp"],
      [{ catchUpWindowMs: 0 }, "body.definition.catchUpWindowMs"],
      [{ catchUpWindowMs: 1.5 }, "body.definition.catchUpWindowMs"],
      [{ catchUpWindowMs: "1h" }, "body.definition.catchUpWindowMs"],
      [{ timezone: "UTC", catchUpWindowMs: -1 }, "body.definition.catchUpWindowMs"],
    ];
    for (const [fields, field] of cases) {
      const reply = await register("bad", fields);
      expect(reply.status).toBe(400);
      const error = refusal(reply);
      expect(error._tag).toBe("InvalidRequest");
      expect(error.field).toBe(field);
      expect(error.message).toContain(field);
    }
    expect(opened.schedule("bad")).toBeUndefined();
    expect(lastSequence()).toBe(before);

    // The OpenAPI document spells the fields out, the policies core's own.
    const openApi = JSON.parse((await send("GET", "/openapi.json")).text);
    const schema =
      openApi.paths["/v1/register-schedule"].post.requestBody.content["application/json"].schema;
    const fields = schema.properties.definition.properties;
    expect(fields.catchUp.enum).toEqual(["once", "skip", "all"]);
    expect(fields.timezone.type).toBe("string");
    expect(fields.catchUpWindowMs.oneOf).toHaveLength(2);
    expect(openApi.paths["/v1/end-batch"].post.requestBody.content).toBeDefined();
  });

  it("over TCP, tells a missing token from a wrong one, and takes ?token= as the header", async () => {
    const missing = refusal(await send("GET", "/v1/counts", undefined, {}, true));
    expect(missing.message).toContain("MissingToken");
    expect(missing.message).toContain("requires `Authorization: Bearer <token>`");
    const wrong = await send("GET", "/v1/counts", undefined, { authorization: "Bearer x" }, true);
    expect(refusal(wrong).message).toContain("WrongToken");
    expect(refusal(wrong).message).toContain("not this server's");
    const token = served.token ?? "";
    expect((await send("GET", `/v1/counts?token=${token}`, undefined, {}, true)).status).toBe(200);
    // A part of the token is a wrong one.
    const part = { authorization: `Bearer ${token.slice(0, 32)}` };
    expect((await send("GET", "/v1/counts", undefined, part, true)).status).toBe(401);
    const query = await send("GET", "/v1/counts?token=x", undefined, {}, true);
    expect([query.status, refusal(query).message]).toEqual([
      401,
      expect.stringContaining("WrongToken"),
    ]);
  });

  it("refuses a job id, a limit or a bound that is no plain decimal, and an unknown order, by field", async () => {
    for (const [path, field] of [
      ["/v1/jobs/01", "path.jobId"],
      ["/v1/jobs/0", "path.jobId"],
      ["/v1/jobs/1e3", "path.jobId"],
      ["/v1/jobs/01/history", "path.jobId"],
      ["/v1/jobs?limit=01", "query.limit"],
      ["/v1/jobs?limit=+1", "query.limit"],
      ["/v1/jobs?after=1.5", "query.after"],
      ["/v1/jobs?before=x", "query.before"],
      ["/v1/jobs?order=newest", "query.order"],
    ] as const) {
      const reply = await send("GET", path);
      const error = refusal(reply);
      expect([path, reply.status, error._tag, error.field]).toEqual([
        path,
        400,
        "InvalidRequest",
        field,
      ]);
    }
  });

  it("refuses a next-jobs wait over 300,000 ms or more than 1,000 lanes, by field", async () => {
    // A job to take at once: a wait taken by mistake answers now instead of waiting it out.
    await opened.insert({ queue: "waits", worker: "W", args: null });
    const lane = { queue: "waits", limit: 1 };
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ lanes: [lane], waitMs: 300_001 }, "body.waitMs"],
      [{ lanes: [lane], waitMs: -1 }, "body.waitMs"],
      [{ lanes: Array.from({ length: 1_001 }, () => lane), waitMs: 0 }, "body.lanes"],
    ];
    for (const [body, field] of cases) {
      const reply = await send("POST", "/v1/next-jobs", JSON.stringify(body));
      const error = refusal(reply);
      expect([reply.status, error._tag, error.field]).toEqual([400, "InvalidRequest", field]);
    }
  });

  it("refuses a lease out of 1,000..3,600,000 ms on every route that takes one, by field", async () => {
    await opened.insert({ queue: "leases", worker: "W", args: null });
    const before = lastSequence();
    const lanes = [{ queue: "leases", limit: 1 }];
    for (const leaseMs of [999, 3_600_001]) {
      const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
        ["/v1/claim", { queue: "leases", leaseMs }],
        ["/v1/next-jobs", { lanes, waitMs: 0, leaseMs }],
        ["/v1/heartbeat", { jobId: 1, attempt: 1, leaseMs }],
      ];
      for (const [path, body] of cases) {
        const reply = await send("POST", path, JSON.stringify(body));
        const error = refusal(reply);
        expect([path, leaseMs, reply.status, error._tag, error.field]).toEqual([
          path,
          leaseMs,
          400,
          "InvalidRequest",
          "body.leaseMs",
        ]);
      }
    }
    expect(lastSequence()).toBe(before);
  });

  it("answers others while a client stalls mid-request", async () => {
    const stalled = connect(served.socket);
    stalled.write('POST /v1/insert HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"job"');
    const reply = await send("GET", "/v1/counts");
    expect(reply.status).toBe(200);
    stalled.destroy();
  });

  it("survives 10,000 random and mutated requests, and the store verifies", async () => {
    const valid = [
      [
        "POST",
        "/v1/insert",
        JSON.stringify({ job: { queue: "f", worker: "W", args: { a: [1, "x"] } } }),
      ],
      ["POST", "/v1/claim", JSON.stringify({ queue: "f", limit: 2 })],
      ["POST", "/v1/complete", JSON.stringify({ jobId: 1, attempt: 1 })],
      ["POST", "/v1/fail", JSON.stringify({ jobId: 2, error: "e" })],
      ["POST", "/v1/cancel", JSON.stringify({ jobId: 3 })],
      [
        "POST",
        "/v1/register-schedule",
        JSON.stringify({
          scheduleId: "s",
          definition: { queue: "f", worker: "W", everyMs: 60000 },
        }),
      ],
      ["GET", "/v1/jobs?queue=f&limit=3", ""],
      ["GET", "/v1/jobs/1", ""],
    ] as const;
    const mutate = (text: string, at: number, byte: number, cut: boolean) =>
      cut
        ? text.slice(0, at % (text.length + 1))
        : `${text.slice(0, at % (text.length + 1))}${String.fromCharCode(byte)}${text.slice((at % (text.length + 1)) + 1)}`;
    const requestArb = fc.oneof(
      fc
        .record({
          base: fc.constantFrom(...valid),
          at: fc.nat(),
          byte: fc.integer({ min: 0, max: 255 }),
          cut: fc.boolean(),
        })
        .map(
          ({ base, at, byte, cut }) => [base[0], base[1], mutate(base[2], at, byte, cut)] as const,
        ),
      fc.tuple(fc.constantFrom("GET", "POST", "PUT", "DELETE"), fc.webPath(), fc.string()),
      fc.tuple(fc.constant("POST"), fc.constantFrom(...valid.map((entry) => entry[1])), fc.json()),
    );
    const samples = fc.sample(requestArb, { numRuns: 10_000, seed: 20261201 });
    let answered = 0;
    for (let index = 0; index < samples.length; index += 50) {
      const replies = await Promise.all(
        samples.slice(index, index + 50).map(([method, path, body]) =>
          send(method, path.startsWith("/") ? path : `/${path}`, body).catch(() => ({
            status: 0,
            text: "",
          })),
        ),
      );
      for (const reply of replies) {
        if (reply.status >= 400 && reply.status < 500) refusal(reply);
        expect(
          reply.status === 0 || reply.status < 500 || reply.status === 503 ? "" : reply.text,
        ).toBe("");
        answered += 1;
      }
    }
    expect(answered).toBe(10_000);
    expect((await send("GET", "/v1/status")).status).toBe(200);
    await opened.flush();
    const inspected = await Effect.runPromise(
      Effect.provide(
        Recovery.inspect(directory, {}, StateProjection.foldProjection),
        NodeDisk.layer,
      ),
    );
    expect(inspected.report.lastSequence).toBe(lastSequence());
  }, 300_000);
});
