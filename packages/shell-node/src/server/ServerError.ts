/**
 * The server's refusals of a request: one tagged error per kind, each
 * answered as a 4xx with one line of JSON (`{"error": {...}}`) before
 * anything is decided, so nothing is appended for them. Each describes
 * itself (disk/Described.ts): its `message` names the route and, where
 * there is one, the field path and what was wrong with it.
 */
import * as Data from "effect/Data";
import * as Described from "../disk/Described.js";

/** The body is not JSON (or not UTF-8). */
export class MalformedJson extends Data.TaggedError("MalformedJson")<{
  readonly route: string;
  readonly detail: string;
}> {
  readonly status = 400;
  get description(): Described.Description {
    return Described.describe("MalformedJson", this.route, `the body is not JSON: ${this.detail}`);
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The body is longer than the server takes. */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{
  readonly route: string;
  readonly limit: number;
}> {
  readonly status = 413;
  get description(): Described.Description {
    return Described.describe(
      "BodyTooLarge",
      this.route,
      `the body is over ${this.limit} bytes; send fewer jobs per request${
        this.route === "/v1/insert-many"
          ? " (or serve with a larger batchBodyBytesMax, tay serve --batch-body-max: one batch is one record, at most 16 MiB)"
          : " (or serve with a larger bodyBytesMax, tay serve --body-max)"
      }`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** No route has this path. */
export class UnknownRoute extends Data.TaggedError("UnknownRoute")<{
  readonly method: string;
  readonly path: string;
}> {
  readonly status = 404;
  get description(): Described.Description {
    return Described.describe(
      "UnknownRoute",
      this.path,
      `no route ${this.method} ${this.path}; GET /openapi.json lists them`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** The route exists, not with this method. */
export class MethodNotAllowed extends Data.TaggedError("MethodNotAllowed")<{
  readonly method: string;
  readonly path: string;
  readonly allowed: string;
}> {
  readonly status = 405;
  get description(): Described.Description {
    return Described.describe(
      "MethodNotAllowed",
      this.path,
      `${this.method} is not allowed here, only ${this.allowed}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/**
 * The served engine can no longer do its work: its log refuses appends for
 * good (its writer failed, or it closed). `GET /v1/health` answers it, so
 * that a liveness check restarts the process; nothing else helps.
 */
export class Unhealthy extends Data.TaggedError("Unhealthy")<{
  readonly path: string;
  readonly reason: string;
}> {
  readonly status = 503;
  get description(): Described.Description {
    return Described.advise(
      Described.describe("Unhealthy", this.path, `the store refuses appends: ${this.reason}`),
      "restart the server once the cause is fixed (tay verify the store first)",
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A field of the request is missing or of the wrong type. */
export class InvalidRequest extends Data.TaggedError("InvalidRequest")<{
  readonly route: string;
  /** The field path, e.g. `body.jobs[2].queue` or `query.limit`. */
  readonly field: string;
  readonly expected: string;
  readonly found: string;
}> {
  readonly status = 400;
  get description(): Described.Description {
    return Described.describe(
      "InvalidRequest",
      this.route,
      `${this.field}: expected ${this.expected}, found ${this.found}; nothing was done`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** Over TCP: no bearer token, or not the server's. */
export class Unauthorized extends Data.TaggedError("Unauthorized")<{
  readonly route: string;
  readonly reason: "MissingToken" | "WrongToken";
}> {
  readonly status = 401;
  get description(): Described.Description {
    return Described.describe(
      this.reason,
      this.route,
      this.reason === "MissingToken"
        ? "this listener requires `Authorization: Bearer <token>` (the token file is in the data directory)"
        : "the bearer token is not this server's (it may have been rotated)",
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** A request the server refused before deciding anything. */
export type RequestError =
  | MalformedJson
  | BodyTooLarge
  | UnknownRoute
  | MethodNotAllowed
  | InvalidRequest
  | Unauthorized;

/** The server could not listen where it was asked (address in use, no permission, ...). */
export class ListenFailed extends Data.TaggedError("ListenFailed")<{
  /** The socket path or `host:port`. */
  readonly address: string;
  readonly code: string;
  readonly detail: string;
}> {
  get description(): Described.Description {
    return Described.describe(this.code, this.address, `cannot listen: ${this.detail}`);
  }
  override get message(): string {
    return Described.message(this);
  }
}

/** `--listen` is not `HOST:PORT` or `PORT`. */
export class InvalidListen extends Data.TaggedError("InvalidListen")<{
  readonly value: string;
}> {
  get description(): Described.Description {
    return Described.describe(
      "InvalidListen",
      undefined,
      `--listen must be PORT or HOST:PORT (port 0..65535), not ${JSON.stringify(this.value)}`,
    );
  }
  override get message(): string {
    return Described.message(this);
  }
}
