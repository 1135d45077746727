/**
 * A Server-Sent Events stream on one response: named events with JSON
 * data, a comment every 15 s so proxies and clients see the stream alive,
 * and the point where a slow reader pushes back (`drained`), so that a
 * stalled client holds its own stream and nothing else.
 */
import type { ServerResponse } from "node:http";
import { type Json, Wire } from "@tay/client";

/** Bytes a stream may hold unsent before its writer waits for the socket. */
export const unsentBytesMax = 1 << 20;

export class EventStream {
  private readonly ping: ReturnType<typeof setInterval>;
  closed = false;

  constructor(private readonly response: ServerResponse) {
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      connection: "keep-alive",
    });
    response.flushHeaders();
    this.ping = setInterval(() => this.comment("ping"), Wire.streamPingMs);
    this.ping.unref();
    response.on("close", () => this.close());
  }

  /** Sends one event; false when the stream is closed. */
  send(event: string, data: Json, id?: number): boolean {
    if (this.closed) return false;
    const idLine = id === undefined ? "" : `id: ${id}\n`;
    this.response.write(`event: ${event}\n${idLine}data: ${JSON.stringify(data)}\n\n`);
    return true;
  }

  /** Whether the reader has fallen so far behind that the writer should wait. */
  get congested(): boolean {
    return this.response.writableLength > unsentBytesMax;
  }

  /** Resolves once the socket took what was queued (or the stream closed). */
  drained(): Promise<void> {
    if (this.closed || !this.congested) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.response.off("drain", done);
        this.response.off("close", done);
        resolve();
      };
      this.response.on("drain", done);
      this.response.on("close", done);
    });
  }

  private comment(text: string): void {
    if (!this.closed) this.response.write(`: ${text}\n\n`);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.ping);
    this.response.end();
  }
}
