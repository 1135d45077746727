/**
 * JSON Schemas of the request bodies the OpenAPI document spells out
 * (`Route.schema`): the v3 schedule fields and the batch of ends. The
 * decoders of `requests.ts` are what the server enforces; these describe
 * the same shapes for other languages' tooling (the enums and limits are
 * core's own constants, so they cannot drift from the decoders').
 */
import type { JsonObject } from "@tay/client";
import { Event, Limits } from "@tay/core";

const integer = (minimum: number, maximum = Number.MAX_SAFE_INTEGER): JsonObject => ({
  type: "integer",
  minimum,
  maximum,
});

/** A payload value in the wire's JSON (docs/protocol.md "Values"). */
const value: JsonObject = { description: "a value: JSON, or $bigint/$bytes/$map" };

const definition: JsonObject = {
  type: "object",
  required: ["queue", "worker"],
  properties: {
    queue: { type: "string" },
    worker: { type: "string" },
    args: value,
    priority: integer(Limits.priorityMin, Limits.priorityMax),
    maxAttempts: integer(Limits.maxAttemptsMin, Limits.maxAttemptsMax),
    everyMs: integer(1),
    cron: { type: "string" },
    overlap: { enum: ["allow", "skip"] },
    timezone: {
      type: "string",
      description: 'an IANA time zone the server knows ("Europe/Berlin") or "UTC"; makes it v3',
    },
    catchUp: { enum: [...Event.catchUpPolicies], description: "makes it v3 (default once)" },
    catchUpWindowMs: {
      oneOf: [integer(1), { type: "null" }],
      description: "makes it v3 (default null: the policy's own window)",
    },
  },
};

export const registerSchedule: JsonObject = {
  type: "object",
  required: ["scheduleId", "definition"],
  properties: {
    scheduleId: { type: "string" },
    definition,
    expectedRevision: integer(0),
  },
};

const backoff: JsonObject = {
  type: "object",
  required: ["baseMs", "factor", "capMs"],
  properties: { baseMs: integer(0), factor: { type: "number" }, capMs: integer(0) },
};

const complete: JsonObject = {
  type: "object",
  required: ["jobId"],
  properties: { jobId: integer(Limits.idMin), result: value, attempt: integer(1) },
};

const fail: JsonObject = {
  type: "object",
  required: ["jobId", "error"],
  properties: {
    jobId: integer(Limits.idMin),
    error: { type: "string" },
    attempt: integer(1),
    discard: { type: "boolean" },
    backoff,
  },
};

export const endBatch: JsonObject = {
  type: "object",
  required: ["ends"],
  properties: {
    ends: {
      type: "array",
      maxItems: 10_000,
      items: {
        oneOf: [
          { type: "object", required: ["complete"], properties: { complete } },
          { type: "object", required: ["fail"], properties: { fail } },
        ],
      },
    },
  },
};
