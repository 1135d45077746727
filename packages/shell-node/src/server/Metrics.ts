/**
 * `GET /metrics`: the served engine in Prometheus' text format, through
 * prom-client on a registry of its own (nothing global, so two servers in
 * one process do not mix). Counters and the batch histogram are fed by
 * the engine's commit watch (what is durable, whoever issued it: in
 * process or remote); gauges are read when scraped.
 */
import type { Event } from "@tay/core";
import * as Effect from "effect/Effect";
import type { Registry } from "prom-client";
import type * as Engine from "../engine/Engine.js";
import type * as Log from "../log/Log.js";
import type * as Projection from "../log/Projection.js";
import { RequestSeconds } from "./internal/requestSeconds.js";

/** prom-client's module, loaded when the first metrics are made (`loadPromClient`). */
type PromClient = typeof import("prom-client");

/** What a scrape reads besides the engine: the server's leases and sessions, the store's facts. */
export interface ServerGauges {
  readonly leases: () => number;
  readonly sessions: () => number;
  readonly leasesExpired: () => number;
  /** The store's pressure, 0..1 (see `Server.StoreFacts`). */
  readonly pressure: () => number;
  /** Segment files of the current generation (0 where the store keeps none). */
  readonly segments: () => number;
}

/** The metrics of one served engine. */
export interface Metrics {
  /** Everything but `tay_request_seconds` (see `text`). */
  readonly registry: Registry;
  /** The whole scrape: the registry's metrics and the request histogram. */
  readonly text: () => Promise<string>;
  /** The scrape's content type. */
  readonly contentType: string;
  /** Observes one answered request: its route and how long it took (seconds). */
  readonly observeRequest: (route: string, status: number, seconds: number) => void;
  /** Stops watching the engine. */
  readonly stop: () => void;
}

/** Committed events so far, by what they count. */
interface EventCounts {
  inserts: number;
  claims: number;
  completions: number;
  failures: number;
  retries: number;
  cancellations: number;
}

/**
 * The committed-event counters: plain numbers the commit watch adds to,
 * read into prom-client's counters when scraped. An `inc` hashes the
 * counter's labels (here none) on every event, on the commit path of
 * every request.
 */
const eventCounters = (prom: PromClient, registry: Registry): EventCounts => {
  const counts: EventCounts = {
    inserts: 0,
    claims: 0,
    completions: 0,
    failures: 0,
    retries: 0,
    cancellations: 0,
  };
  const counter = (name: string, help: string, key: keyof EventCounts) =>
    scrapedCounter(prom, registry, name, help, () => counts[key]);
  counter("tay_inserts_total", "Jobs inserted (committed)", "inserts");
  counter("tay_claims_total", "Attempts started (committed)", "claims");
  counter("tay_completions_total", "Jobs completed", "completions");
  counter("tay_failures_total", "Attempts failed (retried or discarded)", "failures");
  counter("tay_retries_total", "Failed attempts scheduled for a retry", "retries");
  counter("tay_cancellations_total", "Jobs cancelled", "cancellations");
  return counts;
};

const count = (counts: EventCounts, event: Event.DomainEvent): void => {
  switch (event._tag) {
    case "JobInserted":
      counts.inserts += 1;
      return;
    case "JobStarted":
      counts.claims += 1;
      return;
    case "JobRetried":
      counts.failures += 1;
      counts.retries += 1;
      return;
    case "JobFinished":
      if (event.outcome === "completed") counts.completions += 1;
      else counts.failures += 1;
      return;
    case "JobCancelled":
      counts.cancellations += 1;
      return;
    default:
      return;
  }
};

const stateGauges = (
  prom: PromClient,
  registry: Registry,
  engine: Engine.EngineService<Log.Kind>,
  server: ServerGauges,
) => {
  new prom.Gauge({
    name: "tay_jobs",
    help: "Committed jobs by queue and state",
    labelNames: ["queue", "state"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [queue, counts] of engine.promises.counts()) {
        for (const [state, value] of Object.entries(counts)) this.set({ queue, state }, value);
      }
    },
  });
  const gauge = (name: string, help: string, read: () => number) =>
    new prom.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  gauge("tay_store_pressure", "Generation bytes over storeBytesMax (0..1)", () =>
    server.pressure(),
  );
  gauge("tay_segments", "Segment files of the current generation", () => server.segments());
  gauge(
    "tay_last_sequence",
    "Last appended sequence",
    () => Effect.runSync(engine.log.stats()).lastSequence,
  );
  gauge(
    "tay_pending_records",
    "Records appended, not yet durable",
    () => Effect.runSync(engine.log.stats()).pendingRecords,
  );
  inlineWriteMetrics(prom, registry, engine);
  contentionMetrics(prom, registry, engine);
  gauge(
    "tay_subscribers",
    "Subscribers of the committed event stream",
    () => engine.promises.subscriberStats().subscribers,
  );
  gauge(
    "tay_subscriber_lag_records",
    "Records the furthest-behind subscriber has not taken",
    () => engine.promises.subscriberStats().behind,
  );
  gauge("tay_leases", "Leases of remote claims held", server.leases);
  gauge("tay_sessions", "Open worker sessions", server.sessions);
  gauge(
    "tay_leases_expired",
    "Leases that expired or dropped with their session (since start)",
    server.leasesExpired,
  );
  gauge(
    "tay_progress_held",
    "Progress reports the engine holds (at most one per executing attempt)",
    engine.progressHeld,
  );
  // Only for an engine that compacts on its own (`autoCompact`).
  if (engine.autoCompaction() === null) return;
  gauge(
    "tay_auto_compactions",
    "Compactions the engine ran on its own that finished (since start)",
    () => engine.autoCompaction()?.runs ?? 0,
  );
  gauge(
    "tay_auto_compaction_failures",
    "Compactions the engine ran on its own that failed (since start)",
    () => engine.autoCompaction()?.failures ?? 0,
  );
  gauge(
    "tay_auto_compaction_jobs_dropped",
    "Terminal jobs the engine's own compactions dropped (since start)",
    () => engine.autoCompaction()?.jobsDropped ?? 0,
  );
};

/** A counter whose value is `read` when scraped (a count kept elsewhere, not incremented here). */
const scrapedCounter = (
  prom: PromClient,
  registry: Registry,
  name: string,
  help: string,
  read: () => number,
) =>
  new prom.Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });

/**
 * The store writer's inline writes (`Stats.InlineWriteStats`), read when
 * scraped: counters that only grow while the store is open, and the
 * slowest one's time. A log that keeps none (PostgreSQL) shows 0.
 */
const inlineWriteMetrics = (
  prom: PromClient,
  registry: Registry,
  engine: Engine.EngineService<Log.Kind>,
) => {
  const inline = () => Effect.runSync(engine.log.stats()).inlineWrites;
  const counter = (name: string, help: string, read: () => number) =>
    scrapedCounter(prom, registry, name, help, read);
  counter(
    "tay_inline_writes_total",
    "Writes made on the event loop's thread (Maximal or Segment, a lone small batch)",
    () => inline()?.writes ?? 0,
  );
  counter(
    "tay_inline_writes_slow_total",
    "Inline writes slower than 2 ms (each spends its time from a budget; once it is overdrawn, writes go to the thread pool until it refills)",
    () => inline()?.slow ?? 0,
  );
  new prom.Gauge({
    name: "tay_inline_write_slowest_seconds",
    help: "The slowest inline write since the store opened",
    registers: [registry],
    collect() {
      this.set((inline()?.slowestMs ?? 0) / 1000);
    },
  });
};

/**
 * How the engine met other engines on a shared log (`engine.contention()`,
 * docs/postgres.md "Several engines, one store"): only for a log that
 * other writers may append to (`contention().shared`), read when scraped.
 */
const contentionMetrics = (
  prom: PromClient,
  registry: Registry,
  engine: Engine.EngineService<Log.Kind>,
) => {
  if (!engine.contention().shared) return;
  const counter = (name: string, help: string, read: (stats: Engine.CatchUpStats) => number) =>
    scrapedCounter(prom, registry, name, help, () => read(engine.contention()));
  counter(
    "tay_append_conflicts_total",
    "Batches refused because another engine appended first (AppendConflict)",
    (stats) => stats.conflicts,
  );
  counter("tay_catch_ups_total", "Reads of what other engines appended", (stats) => stats.catchUps);
  counter(
    "tay_commands_decided_again_total",
    "Commands decided again after a conflict",
    (stats) => stats.retried,
  );
  counter(
    "tay_contention_exhausted_total",
    "Commands answered ContentionExhausted (nothing appended)",
    (stats) => stats.exhausted,
  );
  counter(
    "tay_records_of_others_folded_total",
    "Records other engines appended, folded into this engine's state",
    (stats) => stats.recordsFolded,
  );
  counter(
    "tay_steps_aside_total",
    "Catch-ups that first waited, the engine having lost the race again (conflictBackoffMs)",
    (stats) => stats.stepsAside,
  );
  counter(
    "tay_step_aside_seconds_total",
    "Time those waits lasted",
    (stats) => stats.steppedAsideMs / 1000,
  );
};

/**
 * prom-client, loaded by the first server that makes metrics rather than
 * by every program that imports this package (~40 ms of a process's start).
 */
let promClient: Promise<PromClient> | undefined;
const loadPromClient = (): Promise<PromClient> => {
  promClient ??= import("prom-client");
  return promClient;
};

/** The metrics of `engine` served with `server`'s leases and sessions. */
export const make = async (
  engine: Engine.EngineService<Log.Kind>,
  server: ServerGauges,
): Promise<Metrics> => {
  const prom = await loadPromClient();
  const registry = new prom.Registry();
  const counters = eventCounters(prom, registry);
  const batches = new prom.Histogram({
    name: "tay_batch_records",
    help: "Records per committed batch (one durable write each)",
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096],
    registers: [registry],
  });
  // Observed on every request, so kept outside prom-client (internal/requestSeconds.ts).
  const requests = new RequestSeconds(
    "tay_request_seconds",
    "Requests from arrival to answer (a command's includes its durable write)",
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2],
  );
  stateGauges(prom, registry, engine, server);
  const stop = engine.watch((records: ReadonlyArray<Projection.Entry>) => {
    batches.observe(records.length);
    for (const { event } of records) {
      const members = event._tag === "Mutation" ? event.events : [event];
      for (const member of members)
        if (member._tag !== "SnapshotPart" && member._tag !== "SnapshotPartV3") {
          count(counters, member);
        }
    }
  });
  return {
    registry,
    // prom-client ends its text with a newline and separates metrics by a blank line.
    text: async () => `${await registry.metrics()}\n${requests.text()}\n`,
    contentType: registry.contentType,
    observeRequest: (route, status, seconds) => requests.observe(route, status, seconds),
    stop,
  };
};
