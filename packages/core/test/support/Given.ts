/**
 * Test vocabulary: event fixtures that read like the table rows of
 * EVENTS.md, and `given(events).when(command).then(events)` /
 * `given(events).apply(event).refuses(reason)` so tests read as specifications.
 */
import { Decide, Evolve, Event, HistoryError, State } from "@tay/core";
import type { Commands, Rejection } from "@tay/core";
import * as Either from "fp-ts/lib/Either.js";
import { expect } from "vitest";

export const definition = (
  overrides: Partial<Event.ScheduleDefinition> = {},
): Event.ScheduleDefinition => ({
  queue: "reports",
  worker: "Report",
  args: null,
  priority: 0,
  maxAttempts: 3,
  everyMs: 60_000,
  cron: null,
  overlap: "allow",
  ...overrides,
});

/** The fields every fixture insert shares, of every schema. */
export const insertDefaults = {
  queue: "default",
  worker: "W",
  args: null,
  priority: 0,
  maxAttempts: 3,
  scheduledAt: 0,
  insertedAt: 0,
} as const;

export const inserted = (
  jobId: number,
  overrides: Partial<Omit<Event.JobInserted, "_tag" | "jobId">> = {},
): Event.JobInserted => Event.jobInserted({ jobId, ...insertDefaults, ...overrides });

export const available = (jobId: number, at = 0): Event.JobAvailable =>
  Event.jobAvailable({ jobId, at });
export const started = (jobId: number, attempt = 1, at = 0): Event.JobStarted =>
  Event.jobStarted({ jobId, at, attempt });
export const completed = (jobId: number, at = 0): Event.JobFinished =>
  Event.jobFinished({ jobId, at, outcome: "completed", error: null });
export const discarded = (jobId: number, error = "boom", at = 0): Event.JobFinished =>
  Event.jobFinished({ jobId, at, outcome: "discarded", error });
export const cancelled = (jobId: number, at = 0): Event.JobCancelled =>
  Event.jobCancelled({ jobId, at, reason: null });
export const retried = (jobId: number, retryAt = 10, at = 0, error = "boom"): Event.JobRetried =>
  Event.jobRetried({ jobId, at, retryAt, error });
export const result = (jobId: number, value: Event.ResultRecorded["result"] = 42, at = 0) =>
  Event.resultRecorded({ jobId, result: value, at });

/** The fields every fixture checkpoint shares, of every schema. */
export const checkpointDefaults = {
  definitionRevision: 1,
  revision: 1,
  registeredAt: 0,
  nextDueAt: 60_000,
  lastDueAt: null,
  cancelledAt: null,
  activeJobIds: [],
  membershipComplete: true,
} as const;

export const checkpoint = (
  scheduleId: string,
  overrides: Partial<Omit<Event.ScheduleCheckpoint, "_tag" | "scheduleId">> = {},
): Event.ScheduleCheckpoint =>
  Event.scheduleCheckpoint({
    scheduleId,
    definition: definition(),
    ...checkpointDefaults,
    ...overrides,
  });

export const delivered = (
  scheduleId: string,
  revision: number,
  dueAt: number,
  nextDueAt: number,
  activeJobId: number,
): Event.OccurrenceAdvanced =>
  Event.occurrenceAdvanced({
    scheduleId,
    revision,
    dueAt,
    nextDueAt,
    outcome: "delivered",
    activeJobId,
  });

export const skipped = (
  scheduleId: string,
  revision: number,
  dueAt: number,
  nextDueAt: number,
): Event.OccurrenceAdvanced =>
  Event.occurrenceAdvanced({
    scheduleId,
    revision,
    dueAt,
    nextDueAt,
    outcome: "skipped",
    activeJobId: null,
  });

/** Folds a history that must be legal. */
export const stateOf = (events: ReadonlyArray<Event.Event>): State.State => {
  const folded = Evolve.fold(events);
  if (Either.isLeft(folded)) throw new Error(HistoryError.describe(folded.left));
  return folded.right;
};

/** Applies records with `evolve` one by one; they must be legal. */
export const evolveAll = (state: State.State, events: ReadonlyArray<Event.Event>): State.State => {
  const evolved = Evolve.evolveAll(state, events);
  if (Either.isLeft(evolved)) throw new Error(HistoryError.describe(evolved.left));
  return evolved.right;
};

export interface Given {
  readonly state: State.State;
  /** Decides a command on the given state. */
  when(command: Commands.Command): When;
  /** Applies one record with the live-tail rules. */
  apply(event: Event.Event): Applied;
}

export interface When {
  /** The decision must be exactly these records, and they must be legal. */
  then(...expected: ReadonlyArray<Event.Event>): State.State;
  /** The command must be rejected with this tag (and these fields, when given). */
  rejects(tag: Rejection.RejectionTag, fields?: Record<string, unknown>): void;
}

export interface Applied {
  /** The record must be accepted; returns the new state. */
  accepts(): State.State;
  /** The record must be refused with this reason tag (and fields). */
  refuses(
    tag: HistoryError.HistoryReasonTag,
    fields?: Record<string, unknown>,
  ): HistoryError.HistoryError;
}

export const given = (...events: ReadonlyArray<Event.Event>): Given => {
  const state = stateOf(events);
  // Both folds must agree on every given history.
  expect(State.equals(evolveAll(State.initialState, events), state)).toBe(true);
  return {
    state,
    when: (command) => {
      const decision = Decide.decide(state, command);
      return {
        // biome-ignore lint/suspicious/noThenProperty: the house given/when/then vocabulary; a When is never awaited.
        then: (...expected) => {
          if (Either.isLeft(decision))
            throw new Error(`rejected: ${JSON.stringify(decision.left)}`);
          expect(decision.right).toEqual(expected);
          return evolveAll(state, decision.right);
        },
        rejects: (tag, fields = {}) => {
          if (Either.isRight(decision))
            throw new Error(`decided: ${JSON.stringify(decision.right)}`);
          expect(decision.left._tag).toBe(tag);
          expect(decision.left).toMatchObject(fields);
        },
      };
    },
    apply: (event) => {
      const evolved = Evolve.evolve(state, event);
      const folded = Evolve.fold([...events, event]);
      return {
        accepts: () => {
          if (Either.isLeft(evolved)) throw new Error(HistoryError.describe(evolved.left));
          if (Either.isLeft(folded)) throw new Error(HistoryError.describe(folded.left));
          expect(State.equals(evolved.right, folded.right)).toBe(true);
          return evolved.right;
        },
        refuses: (tag, fields = {}) => {
          if (Either.isRight(evolved)) throw new Error(`accepted ${event._tag}`);
          if (Either.isRight(folded)) throw new Error(`fold accepted ${event._tag}`);
          expect(evolved.left.reason._tag).toBe(tag);
          expect(evolved.left.reason).toMatchObject(fields);
          // The generation fold names the same reason at the record's index.
          expect(folded.left.reason).toEqual(evolved.left.reason);
          expect(folded.left.index).toBe(events.length);
          return evolved.left;
        },
      };
    },
  };
};
