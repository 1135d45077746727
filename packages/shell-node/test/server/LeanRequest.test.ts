// What the lean path takes as a whole request, read from bytes alone: a request of the table's
// lines with known headers is complete exactly when all its bytes are there (every shorter prefix
// is incomplete), and anything outside the narrow form is handed to node:http.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { headBytesMax, parse } from "../../src/server/internal/leanRequest.js";

const lines = new Map([
  ["POST /v1/insert HTTP/1.1", "insert"],
  ["GET /v1/counts HTTP/1.1", "counts"],
]);

const bodyBytesMax = 1_024;

const headerArb = fc.constantFrom(
  "Content-Type: application/json",
  "accept: */*",
  "User-Agent: curl/8",
  "connection: keep-alive",
  "x-tay-session: s-1",
);

const requestArb = fc
  .record({
    headers: fc.uniqueArray(headerArb, { maxLength: 5, selector: (line) => line.split(":")[0] }),
    body: fc.string({ maxLength: 200 }),
    hostFirst: fc.boolean(),
  })
  .map(({ headers, body, hostFirst }) => {
    const length = `Content-Length:  ${Buffer.byteLength(body)} `;
    const all = hostFirst ? ["Host: tay", length, ...headers] : [...headers, length, "host:tay"];
    return {
      bytes: Buffer.from(`POST /v1/insert HTTP/1.1\r\n${all.join("\r\n")}\r\n\r\n${body}`),
      body,
      session: headers.includes("x-tay-session: s-1") ? "s-1" : undefined,
    };
  });

const tagOf = (text: string) => parse(Buffer.from(text), lines, bodyBytesMax)._tag;

describe("lean requests", () => {
  it("are complete exactly when every byte has arrived, and say where the body lies (property)", () => {
    fc.assert(
      fc.property(requestArb, fc.string({ maxLength: 20 }), ({ bytes, body, session }, next) => {
        for (let cut = 0; cut < bytes.length; cut += 1) {
          expect(parse(bytes.subarray(0, cut), lines, bodyBytesMax)._tag).toBe("Incomplete");
        }
        const parsed = parse(Buffer.concat([bytes, Buffer.from(next)]), lines, bodyBytesMax);
        if (parsed._tag !== "Complete") throw new Error(`not complete: ${parsed._tag}`);
        expect(parsed.entry).toBe("insert");
        expect(parsed.session).toBe(session);
        expect(parsed.close).toBe(false);
        expect(parsed.end).toBe(bytes.length);
        expect(bytes.toString("utf8", parsed.bodyStart, parsed.end)).toBe(body);
      }),
      { numRuns: 200, seed: 20261204 },
    );
  });

  it("hands over anything outside the narrow form", () => {
    const lean = "host: tay\r\ncontent-length: 2\r\n\r\n{}";
    expect(tagOf(`POST /v1/insert HTTP/1.1\r\n${lean}`)).toBe("Complete");
    for (const text of [
      `POST /v1/insert?x=1 HTTP/1.1\r\n${lean}`,
      `POST /v1/insert HTTP/1.0\r\n${lean}`,
      `post /v1/insert HTTP/1.1\r\n${lean}`,
      `POST  /v1/insert HTTP/1.1\r\n${lean}`,
      `\r\nPOST /v1/insert HTTP/1.1\r\n${lean}`,
      "POST /v1/insert HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}",
      `POST /v1/insert HTTP/1.1\r\nhost: tay\r\n${lean}`,
      `POST /v1/insert HTTP/1.1\r\ntransfer-encoding: chunked\r\n${lean}`,
      `POST /v1/insert HTTP/1.1\r\nexpect: 100-continue\r\n${lean}`,
      `POST /v1/insert HTTP/1.1\r\nupgrade: websocket\r\n${lean}`,
      `POST /v1/insert HTTP/1.1\r\nauthorization: Bearer x\r\n${lean}`,
      `POST /v1/insert HTTP/1.1\r\nconnection: upgrade\r\n${lean}`,
      `POST /v1/insert HTTP/1.1\r\n x-folded: 1\r\n${lean}`,
      `POST /v1/insert HTTP/1.1\r\ncontent-length : 2\r\nhost: tay\r\n\r\n{}`,
      `POST /v1/insert HTTP/1.1\r\ncontent-length: +2\r\nhost: tay\r\n\r\n{}`,
      `POST /v1/insert HTTP/1.1\r\ncontent-length: 2\r\ncontent-length: 2\r\nhost: tay\r\n\r\n{}`,
      `POST /v1/insert HTTP/1.1\r\nx-tay-session: a\r\nx-tay-session: b\r\n${lean}`,
      `POST /v1/insert HTTP/1.1\r\nconnection: close\r\nconnection: keep-alive\r\n${lean}`,
      `POST /v1/insert HTTP/1.1\r\nhost: t\nay\r\ncontent-length: 2\r\n\r\n{}`,
      `POST /v1/insert HTTP/1.1\r\nhost: t\u00e9y\r\ncontent-length: 2\r\n\r\n{}`,
      `POST /v1/insert HTTP/1.1\r\nhost: tay\r\ncontent-length: ${bodyBytesMax + 1}\r\n\r\n`,
      "GET /v1/counts HTTP/1.1\r\nhost: tay\r\ncontent-length: 2\r\n\r\n{}",
      "GET /v1/jobs/1 HTTP/1.1\r\nhost: tay\r\n\r\n",
      `POST /v1/insert HTTP/1.1\r\nx-pad: ${"a".repeat(headBytesMax)}\r\n${lean}`,
      `POST /v1/insert HTTP/1.1\r\nhost: tay\r\n${"a".repeat(headBytesMax)}`,
    ]) {
      expect([text.slice(0, 80), tagOf(text)]).toEqual([text.slice(0, 80), "HandOver"]);
    }
  });

  it("takes connection: close, and no content-length as no body", () => {
    const parsed = parse(
      Buffer.from("GET /v1/counts HTTP/1.1\r\nHost: tay\r\nConnection: Close\r\n\r\n"),
      lines,
      bodyBytesMax,
    );
    expect(parsed).toMatchObject({ _tag: "Complete", entry: "counts", close: true });
  });
});
