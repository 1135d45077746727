/**
 * The Server-Sent Events routes: the committed event stream
 * (`/v1/events`), its coalesced tick (`/v1/changes`), a worker session's stream (`/v1/session`: its id, then
 * the ends of the attempts it holds), and worker wake-ups
 * (`/v1/wakeups`: a queue's available count whenever a commit changes it).
 * A reader that falls behind makes its own stream wait; the engine's
 * subscription then reads what it missed from the log, so a stalled
 * client costs bounded memory and stalls nobody else.
 */
import type { ServerResponse } from "node:http";
import { Wire } from "@tay/client";
import { Event, type Progress } from "@tay/core";
import { LatestReports } from "../../engine/LatestReports.js";
import type * as Projection from "../../log/Projection.js";
import { statusOf } from "./http.js";
import { type Call, checked, type Route, type Served } from "./routes.js";
import { EventStream } from "./sse.js";
import * as Requests from "./requests.js";
import { Shape } from "@tay/client";

const streamed = { streamed: true } as const;

/**
 * The node:http response a stream is written to. Only node:http serves
 * these routes (the lean path hands them over), so a call without one is
 * a defect of the server, not of the request.
 */
const responseOf = (call: Call): ServerResponse => {
  if (call.stream === null)
    throw new Error(`${call.route} reached a stream route without a response`);
  return call.stream;
};

/** Committed events from `?from=` (default: the next commit), until the reader leaves. */
const events = async (call: Call, { engine }: Served) => {
  const fromText = call.query.get("from");
  const from =
    fromText === null
      ? undefined
      : checked(call, Shape.integer(1), Requests.integerText(fromText), "query.from");
  const subscription = engine.promises.subscribe(from === undefined ? {} : { from });
  const response = responseOf(call);
  const stream = new EventStream(response);
  response.on("close", () => subscription.close());
  void (async () => {
    try {
      for await (const committed of subscription) {
        if (!stream.send("committed", Wire.committedJson(committed), committed.sequence)) break;
        await stream.drained();
      }
    } catch (error) {
      // The stream's last event: a client tells it from the server's own end of the stream.
      const tag = tagOf(error);
      stream.send("error", {
        _tag: tag,
        message: error instanceof Error ? error.message : String(error),
        status: statusOf(tag),
      });
    }
    stream.close();
  })();
  return streamed;
};

const tagOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Defect";

/**
 * Tells each session the ends of the attempts it holds: one watch for the
 * whole server (installed by `Server`), not one per session, so a commit's
 * records are looked at once however many workers are connected. An end
 * the holder asked for itself is not echoed (`Leases.markEnding`).
 */
export const tellEnds =
  ({ leases, sessions }: Pick<Served, "leases" | "sessions">) =>
  (records: ReadonlyArray<Projection.Entry>): void => {
    if (sessions.size === 0 || leases.size === 0) return;
    for (const { sequence, event } of records) {
      const members = event._tag === "Mutation" ? event.events : [event];
      members.forEach((member, index) => {
        if (!Event.endsAnAttempt(member)) return;
        const holder = leases.tellable(member.jobId);
        const stream = holder === undefined ? undefined : sessions.stream(holder);
        stream?.send(
          "ended",
          Wire.committedJson({ sequence, member: index, event: member }),
          sequence,
        );
      });
    }
  };

/** A worker session: its id first, then `ended` for each attempt of its leases that ends. */
const session = async (call: Call, served: Served) => {
  const response = responseOf(call);
  const stream = new EventStream(response);
  const id = served.sessions.start(stream);
  response.on("close", () => served.sessions.dropped(id));
  stream.send("session", { session: id });
  return streamed;
};

/** Wake-ups: the available count of each named queue, sent whenever a commit changes it. */
const wakeups = async (call: Call, { engine }: Served) => {
  const queues = call.query.getAll("queue");
  const response = responseOf(call);
  const stream = new EventStream(response);
  const last = new Map<string, number>();
  const tell = () => {
    const counts = engine.promises.counts();
    for (const queue of queues.length === 0 ? [...counts.keys()] : queues) {
      const available = counts.get(queue)?.available ?? 0;
      if (last.get(queue) === available) continue;
      last.set(queue, available);
      stream.send("available", { queue, available });
    }
  };
  const unwatch = engine.watch(tell);
  response.on("close", unwatch);
  tell();
  return streamed;
};

/** How long `/v1/changes` gathers commits into one event by default, ms. */
const changesIntervalMsDefault = 100;

/**
 * That something committed (event: changed, `{sequence}`, the last
 * committed), at most once each `?intervalMs=` (default 100): what a view
 * that re-reads on change wants (the dashboard), not every event with its
 * payload. 2026-12-07: the dashboard followed `/v1/events` to know when to
 * refresh; draining 10,000 jobs with it open sent it 5.6 MB and cost the
 * server a third more CPU (0.91 → 1.23 s).
 */
const changes = async (call: Call, { engine }: Served) => {
  const intervalText = call.query.get("intervalMs");
  const intervalMs =
    intervalText === null
      ? changesIntervalMsDefault
      : checked(
          call,
          Shape.integer(10, 60_000),
          Requests.integerText(intervalText),
          "query.intervalMs",
        );
  const response = responseOf(call);
  const stream = new EventStream(response);
  let last = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const send = () => {
    timer = undefined;
    stream.send("changed", { sequence: last }, last);
  };
  const unwatch = engine.watch((records) => {
    last = records.at(-1)?.sequence ?? last;
    timer ??= setTimeout(send, intervalMs);
  });
  response.on("close", () => {
    unwatch();
    if (timer !== undefined) clearTimeout(timer);
  });
  return streamed;
};

/**
 * Progress reports as the engine holds them (event: progress), of the jobs
 * named by `?job=` or of all; first every report held now. A reader that
 * falls behind is sent only the latest report of each job once it has
 * caught up (a report replaces the one before it), and not those of
 * attempts that ended meanwhile (`LatestReports`), so a stalled reader
 * holds about one report per executing attempt.
 */
const progressStream = async (call: Call, { engine }: Served) => {
  const jobs = new Set(
    call.query
      .getAll("job")
      .map((text) => checked(call, Shape.integer(1), Requests.integerText(text), "query.job")),
  );
  const response = responseOf(call);
  const stream = new EventStream(response);
  const behind = new LatestReports();
  const current = (held: Progress.Progress) =>
    engine.promises.progress(held.jobId)?.attempt === held.attempt;
  let catchingUp = false;
  const send = (progress: Progress.Progress) =>
    stream.send("progress", Wire.progressJson(progress));
  const catchUp = async () => {
    catchingUp = true;
    while (behind.size > 0 && !stream.closed) {
      await stream.drained();
      for (let next = behind.take(); next !== undefined; next = behind.take()) {
        send(next);
        if (stream.congested) break;
      }
    }
    catchingUp = false;
  };
  const tell = (progress: Progress.Progress) => {
    if (jobs.size > 0 && !jobs.has(progress.jobId)) return;
    if (!catchingUp && !stream.congested) {
      send(progress);
      return;
    }
    behind.add(progress, current);
    if (!catchingUp) void catchUp();
  };
  const unwatch = engine.promises.watchProgress(tell);
  response.on("close", unwatch);
  for (const progress of engine.promises.progresses()) tell(progress);
  return streamed;
};

export const streams: ReadonlyArray<Route> = [
  {
    method: "GET",
    path: "/v1/events",
    summary: "SSE: committed events from ?from= (event: committed)",
    handle: events,
  },
  {
    method: "GET",
    path: "/v1/changes",
    summary:
      "SSE: that something committed (event: changed, {sequence}), at most once each ?intervalMs= (default 100, 10..60,000)",
    handle: changes,
  },
  {
    method: "GET",
    path: "/v1/session",
    summary: "SSE: a worker session (event: session, then ended); claims naming it drop with it",
    handle: session,
  },
  {
    method: "GET",
    path: "/v1/progress/stream",
    summary:
      "SSE: progress reports of executing attempts as they are held, of ?job= or all (event: progress), first those held now",
    handle: progressStream,
  },
  {
    method: "GET",
    path: "/v1/wakeups",
    summary: "SSE: available counts of ?queue= (event: available) whenever a commit changes them",
    handle: wakeups,
  },
];
