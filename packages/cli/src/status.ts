/**
 * The status view shared by `tay status` and the end of `tay demo`: the
 * recovery report (store id, epoch, segments, sequences, bytes), store
 * pressure, jobs by state overall and by queue, and schedules.
 */
import { Event, Query, type Queue, State } from "@tay/core";
import { type Recovery, Stats, StoreOptions } from "@tay/shell-node";
import type { JsonObject } from "./json.js";
import * as Text from "./text.js";

/** What a status shows about the files (a recovery report, or a running store's stats). */
export interface StatusFiles {
  readonly path: string;
  readonly storeId: string;
  readonly epoch: number;
  readonly parentEpoch: number;
  readonly baseRecordCount: number;
  readonly segments: number;
  readonly records: number;
  readonly firstSequence: number;
  readonly lastSequence: number;
  readonly bytes: number;
  readonly orphanedGenerations: Recovery.RecoveryReport["orphanedGenerations"];
  /** A leftover `SEGMENT.tmp` (ignored by open): shown when present. */
  readonly stagedSegment?: Recovery.RecoveryReport["stagedSegment"];
}

/** The pressure the default capacity (`storeBytesMax`) gives these bytes. */
export const pressureOf = (bytes: number): number =>
  Stats.pressure(bytes, StoreOptions.defaults.storeBytesMax);

const countsJson = (counts: Query.Counts): JsonObject =>
  Object.fromEntries(Event.jobStates.map((state) => [state, counts[state]]));

const scheduleCounts = (state: State.State) => {
  let active = 0;
  let cancelled = 0;
  for (const schedule of state.schedules.values()) {
    if (schedule.cancelledAt === null) active += 1;
    else cancelled += 1;
  }
  return { active, cancelled };
};

/** The status as JSON. */
export const statusJson = (files: StatusFiles, state: State.State): JsonObject => {
  const pressure = pressureOf(files.bytes);
  const schedules = scheduleCounts(state);
  return {
    path: files.path,
    store_id: files.storeId,
    epoch: files.epoch,
    parent_epoch: files.parentEpoch,
    base_record_count: files.baseRecordCount,
    segments: files.segments,
    records: files.records,
    first_sequence: files.firstSequence,
    last_sequence: files.lastSequence,
    bytes: files.bytes,
    store_pressure: pressure,
    overloaded: Stats.isOverloaded(pressure),
    orphaned_generations: files.orphanedGenerations.map((orphan) => ({
      epoch: orphan.epoch,
      path: orphan.path,
      kind: orphan.kind,
    })),
    staged_segment: files.stagedSegment ?? null,
    last_job_id: state.lastJobId,
    jobs: countsJson(Query.totals(state)),
    queues: Object.fromEntries(
      [...Query.counts(state)].map(([queue, counts]) => [queue, countsJson(counts)]),
    ),
    schedules: { total: state.schedules.size, ...schedules },
    next_wake_at: Query.nextWakeAt(state),
    event_schema_3: State.usesSchema3(state),
    queue_states: [...state.queues.values()].map(queueStateJson),
  };
};

/** A queue's state (EVENTS-V3.md) as JSON. */
export const queueStateJson = (queue: {
  readonly queue: string;
  readonly at: number;
  readonly paused: boolean;
  readonly concurrency: number | null;
  readonly rateLimit: { readonly count: number; readonly perMs: number } | null;
}): JsonObject => ({
  queue: queue.queue,
  at: queue.at,
  paused: queue.paused,
  concurrency: queue.concurrency,
  rate_limit:
    queue.rateLimit === null
      ? null
      : { count: queue.rateLimit.count, per_ms: queue.rateLimit.perMs },
});

/** A queue's state as shown: the default (running, no limits) for a queue whose state was never set. */
export const shownQueueState = (
  queue: string,
  state: Queue.QueueState | undefined,
): Queue.QueueState => state ?? { queue, at: 0, paused: false, concurrency: null, rateLimit: null };

/** `queueStateJson` of a queue's state or its default, whose `at` is null. */
export const shownQueueStateJson = (
  queue: string,
  state: Queue.QueueState | undefined,
): JsonObject => ({ ...queueStateJson(shownQueueState(queue, state)), at: state?.at ?? null });

/** A queue's state on one line: "paused, concurrency 4, 10 per 1000 ms", or "running". */
export const queueStateText = (queue: {
  readonly paused: boolean;
  readonly concurrency: number | null;
  readonly rateLimit: { readonly count: number; readonly perMs: number } | null;
}): string => {
  const parts = [queue.paused ? "paused" : "running"];
  if (queue.concurrency !== null) parts.push(`concurrency ${queue.concurrency}`);
  if (queue.rateLimit !== null) {
    parts.push(`${queue.rateLimit.count} per ${queue.rateLimit.perMs} ms`);
  }
  return parts.join(", ");
};

/** The status as aligned text. */
export const statusLines = (files: StatusFiles, state: State.State): Array<string> => {
  const pressure = pressureOf(files.bytes);
  const schedules = scheduleCounts(state);
  const totals = Query.totals(state);
  const lines = Text.fields([
    ["store", files.path],
    ["store id", files.storeId],
    ["epoch", `${files.epoch} (parent ${files.parentEpoch})`],
    ["segments", `${files.segments}`],
    [
      "records",
      `${files.records} (sequences ${files.firstSequence}..${files.lastSequence}, base ${files.baseRecordCount})`,
    ],
    ["bytes", `${files.bytes} (${Text.bytes(files.bytes)})`],
    [
      "store pressure",
      `${(pressure * 100).toFixed(2)}% of ${Text.bytes(StoreOptions.defaults.storeBytesMax)}${Stats.isOverloaded(pressure) ? " (overloaded)" : ""}`,
    ],
    ["last job id", `${state.lastJobId}`],
    [
      "schedules",
      `${state.schedules.size} (${schedules.active} active, ${schedules.cancelled} cancelled)`,
    ],
    ["next wake", Text.time(Query.nextWakeAt(state))],
  ]);
  // EVENTS-V3.md: status says when the store can no longer be read by Event v1/v2 readers.
  if (State.usesSchema3(state)) lines.push("event schema 3 in use");
  for (const queue of state.queues.values()) {
    lines.push(`queue ${Text.printable(queue.queue)}: ${queueStateText(queue)}`);
  }
  for (const orphan of files.orphanedGenerations) {
    lines.push(`orphaned generation ${orphan.epoch} (${orphan.kind}): ${orphan.path}`);
  }
  if (files.stagedSegment) lines.push(`staged segment (ignored): ${files.stagedSegment}`);
  const headers = ["QUEUE", ...Event.jobStates.map((name) => name.toUpperCase()), "TOTAL"];
  const row = (name: string, counts: Query.Counts) => {
    const values = Event.jobStates.map((jobState) => counts[jobState]);
    return [name, ...values.map(String), String(values.reduce((sum, count) => sum + count, 0))];
  };
  const rows = [...Query.counts(state)].map(([queue, counts]) => row(queue, counts));
  rows.push(row("(all)", totals));
  lines.push(
    "",
    ...Text.table(headers, rows, ["left", ...headers.slice(1).map(() => "right" as const)]),
  );
  return lines;
};
