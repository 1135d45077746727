/**
 * The worker runtime over a client (`@tay/client`): the same `Worker`,
 * its jobs claimed from a server in another process. A thin adapter gives
 * the worker what it needs of an engine (`Worker.WorkerEngine`):
 *
 * - the waiting claim is the client's `nextJobs` (a long poll), its jobs
 *   leased to the client's session; a connection that fails is retried
 *   after a pause instead of ending the worker's claim loop;
 * - the commit watch is the session's stream of the ends of the attempts
 *   it holds (a cancel, a rescue, an expired lease abort the handler);
 * - complete and fail go through the client, fenced by the attempt;
 * - while a job runs, its lease is extended by a heartbeat every third of
 *   the lease, so a live handler keeps its job however long it runs, and a
 *   worker that dies or loses its connection loses it (the attempt fails
 *   with "lease expired" and is retried by the usual rules); a heartbeat
 *   answered "not held" aborts the handler (`WorkerEngine.lost`);
 * - a handler's progress reports go to the server, one request per job in
 *   flight, the latest waiting (`internal/progressReports.ts`).
 */
import { type Client, Transport } from "@tay/client";
import type { Job } from "@tay/core";
import type * as Engine from "../engine/Engine.js";
import type * as Log from "../log/Log.js";
import * as Worker from "../worker/Worker.js";
import { leaseMsDefault, leaseMsMax, leaseMsMin } from "./internal/leases.js";
import { progressReports } from "./internal/progressReports.js";

/** What the adapter needs of a client (`@tay/client`'s `Client` has it). */
export type RemoteClient = Pick<
  Client.Client,
  "nextJobs" | "complete" | "fail" | "heartbeat" | "openSession" | "onEnded" | "reportProgress"
>;

/** How long a failed claim waits before it asks again. */
export const reconnectMsDefault = 1_000;

/** How a remote worker runs: the worker's options, and its leases. */
export interface RemoteOptions<Registry> extends Worker.StartOptions<Registry> {
  /** Each claimed job's lease (default 30 s), extended every third of it while it runs. */
  readonly leaseMs?: number;
  /** How long a claim that failed for now waits before it asks again (default 1 s). */
  readonly reconnectMs?: number;
}

type Lanes = Parameters<Engine.EngineService["nextJobs"]>[0];
type Claiming = NonNullable<Parameters<Engine.EngineService["nextJobs"]>[1]>;

/** Resolves after `ms`, or at once when `signal` aborts. */
const pause = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

/**
 * `opening`, or undefined as soon as `signal` aborts: a session that opens
 * against a silent server waits up to the client's `streamIdleMs` (45 s),
 * and a worker's close must not (it waited so until 2026-12-06).
 */
const unlessGivenUp = <A>(opening: Promise<A>, signal: AbortSignal | undefined) =>
  new Promise<A | undefined>((resolve, reject) => {
    const givenUp = () => resolve(undefined);
    if (signal?.aborted === true) return givenUp();
    signal?.addEventListener("abort", givenUp, { once: true });
    opening.then(resolve, reject).finally(() => signal?.removeEventListener("abort", givenUp));
  });

/** Whether the request may not have reached the server: the connection failed (the client is open). */
const connectionFailed = (error: unknown): boolean =>
  typeof error === "object" &&
  error !== null &&
  Reflect.get(error, "_tag") === "ConnectionFailed" &&
  !Transport.refusedForGood(error);

/**
 * Sends an attempt's end again while its connection fails (a reset, the
 * server unreachable for a moment), every `reconnectMs`, for at most
 * `leaseMs`: past it the server has failed the attempt for its lease, and
 * the end would be refused. The end names its attempt, so one that did
 * commit before its answer was lost is refused as stale when sent again,
 * never recorded twice. Given up at once, the end was `Unrecorded` and
 * the job ran again after its lease (until 2026-12-06).
 */
const endRetried = async <A>(send: () => Promise<A>, retrying: Retrying): Promise<A> => {
  const leaseEnds = Date.now() + retrying.leaseMs;
  for (;;) {
    try {
      return await send();
    } catch (error) {
      const giveUpAt = Math.min(leaseEnds, retrying.closeBy());
      if (!connectionFailed(error) || Date.now() + retrying.reconnectMs > giveUpAt) throw error;
      await pause(retrying.reconnectMs, undefined);
    }
  }
};

/** What the claims tell of their failures. */
interface Retrying {
  readonly leaseMs: number;
  readonly reconnectMs: number;
  /** Told each failure that is asked again (`ClaimFailed`). */
  readonly failed: (cause: unknown, retryInMs: number) => void;
  /** Told each claim the server answered. */
  readonly answered: () => void;
  /** When a close began, when its handlers' time runs out: ends are not sent again past it. */
  readonly closeBy: () => number;
}

/**
 * Asks until the server answers (or the signal gives up): the claim loop
 * never ends on a drop, and a failure for good (`Transport.refusedForGood`) rejects,
 * which halts the worker.
 */
const claimed = async (
  client: RemoteClient,
  lanes: Lanes,
  options: Claiming,
  retrying: Retrying,
): Promise<ReadonlyArray<Job.Job>> => {
  for (;;) {
    try {
      await unlessGivenUp(client.openSession(), options.signal);
      if (options.signal?.aborted === true) return [];
      const jobs = await client.nextJobs(lanes, { ...options, leaseMs: retrying.leaseMs });
      retrying.answered();
      return jobs;
    } catch (error) {
      if (options.signal?.aborted === true) return [];
      if (Transport.refusedForGood(error)) throw error;
      retrying.failed(error, retrying.reconnectMs);
      await pause(retrying.reconnectMs, options.signal);
    }
  }
};

/**
 * The heartbeats of the running jobs' leases. A heartbeat answered "not
 * held" tells `lost`: the server no longer leases that attempt to this
 * worker (it expired while heartbeats could not get through, or the server
 * restarted and rescued it), so its job may already run elsewhere and the
 * handler is aborted rather than left to run on. A job rescued by a
 * restarted server can be claimed again by this worker while the old
 * attempt's handler runs: each attempt held is beaten for, by job and
 * attempt (by job alone, the new attempt hid the old one, never aborted).
 */
const heartbeats = (client: RemoteClient, leaseMs: number) => {
  // Job id -> the attempts of it running here (mostly one).
  const running = new Map<number, Set<number>>();
  const lost = new Set<(jobId: number, attempt: number) => void>();
  /** Stops beating for `attempt` of `jobId`, or for all of its attempts. */
  const release = (jobId: number, attempt?: number) => {
    const attempts = running.get(jobId);
    if (attempt !== undefined) attempts?.delete(attempt);
    if (attempt === undefined || attempts?.size === 0) running.delete(jobId);
  };
  const beat = (jobId: number, attempt: number) =>
    client.heartbeat(jobId, attempt, leaseMs).then(
      (held) => {
        if (held || running.get(jobId)?.has(attempt) !== true) return;
        release(jobId, attempt);
        for (const listener of lost) listener(jobId, attempt);
      },
      () => undefined,
    );
  const timer = setInterval(
    () => {
      for (const [jobId, attempts] of running) {
        for (const attempt of attempts) void beat(jobId, attempt);
      }
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  const hold = (jobId: number, attempt: number) => {
    const attempts = running.get(jobId);
    if (attempts === undefined) running.set(jobId, new Set([attempt]));
    else attempts.add(attempt);
  };
  return { hold, release, lost, stop: () => clearInterval(timer) };
};

/** The engine the worker runs on, made of `client`; `failed` is told each claim asked again. */
export const engineOf = <K extends Log.Kind>(
  client: RemoteClient,
  leaseMs: number,
  retry: Partial<Pick<Retrying, "reconnectMs" | "failed">> = {},
) => {
  let closeBy = Number.POSITIVE_INFINITY;
  // Since the last claim failed and until one is answered: the worker is `reconnecting`.
  let failing = false;
  const retrying: Retrying = {
    leaseMs,
    reconnectMs: retry.reconnectMs ?? reconnectMsDefault,
    failed: (cause, retryInMs) => {
      failing = true;
      retry.failed?.(cause, retryInMs);
    },
    answered: () => {
      failing = false;
    },
    closeBy: () => closeBy,
  };
  const beats = heartbeats(client, leaseMs);
  const engine: Worker.WorkerEngine<K> = {
    watch: (listener) =>
      client.onEnded((committed) => {
        // The end of the job's current attempt: no older one held is current either, and the
        // worker aborts them all (their heartbeats would only find them gone).
        if ("jobId" in committed.event) beats.release(committed.event.jobId);
        listener([{ sequence: committed.sequence, event: committed.event }]);
      }),
    promises: {
      nextJobs: async (lanes, options = {}) => {
        const jobs = await claimed(client, lanes, options, retrying);
        for (const job of jobs) beats.hold(job.jobId, job.attempt);
        return jobs;
      },
      complete: (jobId, result, options) =>
        endRetried(() => client.complete(jobId, result, options), retrying).finally(() =>
          beats.release(jobId, options?.attempt),
        ),
      fail: (jobId, error, options) =>
        endRetried(() => client.fail(jobId, error, options), retrying).finally(() =>
          beats.release(jobId, options?.attempt),
        ),
      reportProgress: progressReports(client),
    },
    unreachable: () => failing,
    lost: (listener) => {
      beats.lost.add(listener);
      return () => {
        beats.lost.delete(listener);
      };
    },
  };
  const closing = (timeoutMs: number) => {
    closeBy = Date.now() + timeoutMs;
  };
  return { engine, stop: beats.stop, closing };
};

/**
 * Starts a worker whose jobs come from the server `client` is connected
 * to: what `Worker.start` does on an embedded engine (`handleSignals`
 * included). Rejects with `InvalidWorkerOption` before anything starts.
 */
export const start = async <Registry = Record<string, Worker.Plain>>(
  client: RemoteClient,
  options: RemoteOptions<Registry>,
): Promise<Worker.StartedWorker> => {
  const { leaseMs = leaseMsDefault, reconnectMs = reconnectMsDefault, ...workerOptions } = options;
  // The server's range for a lease (docs/protocol.md): out of it, every claim would be refused.
  for (const [option, value, min, max, expected] of [
    [
      "leaseMs",
      leaseMs,
      leaseMsMin,
      leaseMsMax,
      "an integer number of milliseconds from 1,000 to 3,600,000",
    ],
    [
      "reconnectMs",
      reconnectMs,
      1,
      Number.MAX_SAFE_INTEGER,
      "an integer number of milliseconds, at least 1",
    ],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new Worker.InvalidWorkerOption({ option, value: String(value), expected });
    }
  }
  const onEvent = options.onEvent;
  const failed = (cause: unknown, retryInMs: number) => {
    const error = cause instanceof Error ? cause.message : String(cause);
    try {
      onEvent?.({ _tag: "ClaimFailed", error, cause, retryInMs });
    } catch (thrown) {
      // The listener's own error, left unhandled as a throw from any other event's is: the
      // claims go on rather than halt for it.
      void Promise.reject(thrown);
    }
  };
  const { engine, stop, closing } = engineOf(client, leaseMs, { reconnectMs, failed });
  return Worker.startOn(engine, workerOptions, { closing, stopped: stop });
};
