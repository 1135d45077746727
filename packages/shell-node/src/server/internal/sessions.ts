/**
 * Sessions of remote workers: a session is one open event stream
 * (`GET /v1/session`). Claims that name it (`x-tay-session`) lease their
 * jobs to it; while it is open it is told the end of every attempt it
 * holds (so a cancelled job's handler is aborted); when its connection
 * drops, every attempt it holds fails at once ("lease expired: the
 * client's connection dropped") instead of at its lease's end.
 */
import { randomUUID } from "node:crypto";
import type { EventStream } from "./sse.js";

export class Sessions {
  private readonly open = new Map<string, EventStream>();

  constructor(private readonly onDrop: (session: string) => void) {}

  /** Opens a session on `stream`; dropped when the stream closes. */
  start(stream: EventStream): string {
    const session = randomUUID();
    this.open.set(session, stream);
    return session;
  }

  has(session: string): boolean {
    return this.open.has(session);
  }

  /** The session's stream, when open. */
  stream(session: string): EventStream | undefined {
    return this.open.get(session);
  }

  /** The session's connection dropped (or it closed): its attempts fail now. */
  dropped(session: string): void {
    if (!this.open.delete(session)) return;
    this.onDrop(session);
  }

  get size(): number {
    return this.open.size;
  }

  /** Closes every session's stream (the server stops). */
  closeAll(): void {
    for (const stream of this.open.values()) stream.close();
    this.open.clear();
  }
}
