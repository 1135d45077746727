/**
 * The OpenAPI 3.1 document the server serves at `GET /openapi.json`,
 * built from the route table itself, so it cannot list a route the server
 * lacks or miss one it has.
 */
import type { JsonObject } from "@tay/client";
import type { Route } from "./internal/routes.js";

const errorSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["_tag", "message"],
      properties: {
        _tag: { type: "string" },
        message: { type: "string" },
        field: { type: "string" },
        rejection: { type: "object" },
      },
    },
  },
};

const operation = (route: Route): JsonObject => ({
  summary: route.summary,
  ...(route.body === undefined
    ? {}
    : {
        requestBody: {
          required: true,
          description: route.body,
          content: { "application/json": { schema: route.schema ?? { type: "object" } } },
        },
      }),
  responses: {
    "200": {
      description: "the answer, once durable for a command",
      content: {
        [route.summary.startsWith("SSE") ? "text/event-stream" : "application/json"]: {
          schema: { type: "object" },
        },
      },
    },
    "4XX": {
      description: "refused: one typed JSON error line, nothing appended",
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    },
  },
});

/** The document for `routes`. */
export const document = (routes: ReadonlyArray<Route>): JsonObject => {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z]+)/g, "{$1}");
    paths[path] = { ...(paths[path] ?? {}), [route.method.toLowerCase()]: operation(route) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Tay server",
      version: "1",
      description: "The engine of one Tay store over HTTP/1.1 and JSON (docs/protocol.md).",
    },
    components: {
      schemas: { Error: errorSchema },
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    },
    paths,
  };
};
