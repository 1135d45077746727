// Every failure kind the CLI can meet describes itself in exactly one line
// `<Reason> <path>[ at offset N][ sequence N]: <explanation>` (its `message`),
// named by the most specific reason the spec or the code gives, and the CLI
// prints that line after `tay: ` and adds nothing. The samples are a record
// keyed by every failure tag, so a new error kind fails the typecheck here.
import { Event, HistoryError } from "@tay/core";
import { describe, expect, it } from "vitest";
import {
  BulkStopped,
  JobNotCompleted,
  CompactedWhileDumped,
  JobNotFound,
  NotServed,
  ServedFailure,
  UsageError,
  RecordNotKept,
  WaitFailed,
} from "../src/CliError.js";
import * as Errors from "../src/describe.js";
import { CopyMismatch } from "../src/postgres.js";
import { PgError } from "@tay/log-postgres";
import { CopyPrefix, Disk, Engine, ServerError, StoreError, TerminalIndex } from "@tay/shell-node";

const { CopyVerificationFailed, PrefixUnavailable } = CopyPrefix;
const { DiskError } = Disk;
const { Rejected } = Engine;

type Samples = { readonly [Tag in Errors.Failure["_tag"]]: Extract<Errors.Failure, { _tag: Tag }> };

const segment = "/data/epochs/00000000000000000001/segments/00000000000000000001.tay";
const disk = new DiskError({
  operation: "write",
  path: segment,
  code: "ENOSPC",
  detail: "no space\nleft",
});
const refusal = HistoryError.historyError({
  index: 3,
  sequence: 4,
  event: Event.jobStarted({ jobId: 9, at: 0, attempt: 1 }),
  memberIndex: null,
  reason: { _tag: "UnknownJob", jobId: 9 },
});
const corrupt = new StoreError.CorruptRecord({
  path: segment,
  offset: 512,
  sequence: 7,
  reason: "RecordChecksum",
});

const samples: Samples = {
  TerminalIndexCorrupt: new TerminalIndex.TerminalIndexCorrupt({
    path: "/data/terminal-index/entries",
    offset: 96,
    reason: "RecordChecksum",
  }),
  UsageError: new UsageError({ command: "jobs", detail: "Unknown option '--bogus'" }),
  JobNotFound: new JobNotFound({ path: "/data", jobId: 5 }),
  CompactedWhileDumped: new CompactedWhileDumped({
    path: "/data",
    printedEpoch: 3,
    printedThrough: 1200,
    foundEpoch: 4,
  }),
  NotEmpty: new StoreError.NotEmpty({ path: "/data", entries: ["a", "b"] }),
  UnsupportedStoreV1: new StoreError.UnsupportedStoreV1({ path: "/data", found: "segments" }),
  IncompleteInitialization: new StoreError.IncompleteInitialization({ path: "/data" }),
  StoreNotFound: new StoreError.StoreNotFound({ path: "/data", reason: "MissingMarker" }),
  Locked: new StoreError.Locked({
    path: "/data/LOCK",
    holder: { pid: 42, host: "box", session: "ab".repeat(16), acquiredAt: 0 },
  }),
  LockSessionLost: new StoreError.LockSessionLost({ path: "/data/LOCK", session: "cd".repeat(16) }),
  MalformedFile: new StoreError.MalformedFile({
    path: "/data/CURRENT",
    kind: "Current",
    offset: 32,
    reason: {
      _tag: "ChecksumMismatch",
      structure: "CurrentPointer",
      offset: 32,
      expected: 1,
      actual: 2,
    },
  }),
  Mismatch: new StoreError.Mismatch({
    path: segment,
    offset: 52,
    field: "Sequence",
    expected: "3",
    found: "9",
  }),
  UnexpectedEntry: new StoreError.UnexpectedEntry({ path: "/data/epochs", name: "x\ny" }),
  MissingEntry: new StoreError.MissingEntry({ path: "/data/epochs/00000000000000000001/MANIFEST" }),
  SegmentGap: new StoreError.SegmentGap({ path: "/data/segments", expected: 2, found: 3 }),
  InvalidSegment: new StoreError.InvalidSegment({
    path: segment,
    offset: 100,
    reason: "MissingFooter",
  }),
  CorruptRecord: corrupt,
  BeyondSafeInteger: new StoreError.BeyondSafeInteger({
    path: segment,
    offset: 60,
    field: "sequence",
  }),
  IncompleteTail: new StoreError.IncompleteTail({
    path: segment,
    offset: 900,
    sequence: 12,
    part: "Record",
  }),
  UndecodableEvent: new StoreError.UndecodableEvent({
    path: segment,
    offset: 44,
    sequence: 1,
    reason: { _tag: "UnknownEvent", type: 99, schema: 1, path: "" },
  }),
  HistoryRejected: new StoreError.HistoryRejected<HistoryError.HistoryError>({
    path: segment,
    offset: 300,
    sequence: 4,
    reason: refusal,
  }),
  MissingBase: new StoreError.MissingBase({
    path: "/data/segments",
    baseRecordCount: 5,
    records: 2,
  }),
  BudgetExceeded: new StoreError.BudgetExceeded({
    path: "/somewhere",
    budget: "historyRecords",
    limit: 10,
  }),
  ActiveSegmentChanged: new StoreError.ActiveSegmentChanged({ path: segment, reason: "Size" }),
  Compacted: new StoreError.Compacted({ path: "/data", sequence: 1, firstAvailable: 40 }),
  UnencodableEvent: new StoreError.UnencodableEvent({
    index: 0,
    reason: { _tag: "SchemaMismatch" },
  }),
  PendingFull: new StoreError.PendingFull({ path: "/data", pendingBytes: 10, limit: 5 }),
  WriterFailed: new StoreError.WriterFailed({ cause: disk }),
  StoreClosed: new StoreError.StoreClosed({ path: "/data" }),
  HardLinksUnsupported: new StoreError.HardLinksUnsupported({
    path: segment,
    operation: "activation",
    cause: new DiskError({ operation: "link", path: segment, code: "EPERM", detail: "no links" }),
  }),
  CompactionConflict: new StoreError.CompactionConflict({
    path: "/data",
    expectedLastSequence: 3,
    lastSequence: 5,
  }),
  InvalidOption: new StoreError.InvalidOption({
    path: "/data",
    option: "storeBytesMax",
    value: "0",
  }),
  AppendConflict: new StoreError.AppendConflict({
    path: "/data",
    expectedLastSequence: 3,
    lastSequence: 5,
  }),
  InvalidArgument: new Engine.InvalidArgument({
    argument: "compact.retentionMs",
    value: "NaN",
    expected: "an integer number of milliseconds, 0 to 2^53-1",
  }),
  Overloaded: new Engine.Overloaded({ queuedCommandsMax: 100_000 }),
  InvalidUrl: new PgError.InvalidUrl({ url: "postgres://db", reason: "no database named" }),
  SchemaVersionMismatch: new PgError.SchemaVersionMismatch({
    path: "postgres://tay@db:5432/app#tay.default",
    found: 0,
    expected: 1,
  }),
  StoreExists: new PgError.StoreExists({
    path: "postgres://tay@db:5432/app#tay.default",
    store: "default",
  }),
  MissingRow: new PgError.MissingRow({
    path: "postgres://tay@db:5432/app#tay.default",
    table: "tay_current",
    epoch: undefined,
  }),
  MalformedRow: new PgError.MalformedRow({
    path: "postgres://tay@db:5432/app#tay.default",
    table: "tay_current",
    column: "epoch",
    found: "-1",
    epoch: undefined,
    sequence: undefined,
  }),
  DatabaseError: new PgError.DatabaseError({
    path: "postgres://tay@db:5432/app#tay.default",
    operation: "append",
    code: "42P01",
    detail: "relation does not exist",
  }),
  ConnectionLost: new PgError.ConnectionLost({
    path: "postgres://tay@db:5432/app#tay.default",
    operation: "append",
    lastSequence: 7,
    attempts: 5,
    detail: "Connection terminated unexpectedly",
  }),
  CompactionBusy: new PgError.CompactionBusy({
    path: "postgres://tay@db:5432/app#tay.default",
    holder: "6f9619ff-8b86-4011-b42d-00c04fc964ff",
    label: "worker-2 pid 4121",
    expiresAt: 1_796_300_000_000,
  }),
  CompactionLeaseLost: new PgError.CompactionLeaseLost({
    path: "postgres://tay@db:5432/app#tay.default",
    epoch: 4,
    label: "worker-2 pid 4121",
    expiresAt: 1_796_300_000_000,
  }),
  CopyMismatch: new CopyMismatch({
    path: "postgres://tay@db:5432/app#tay.default",
    detail: "the copy ends at sequence 4, the source at 5",
  }),
  ContentionExhausted: new Engine.ContentionExhausted({
    path: "postgres://db/app#tay.default",
    attempts: 64,
    lastSequence: 90,
  }),
  DiskError: disk,
  Rejected: new Rejected({
    command: "RegisterSchedule",
    rejection: { _tag: "RevisionMismatch", scheduleId: "s", expected: 0, actual: 2 },
  }),
  PrefixUnavailable: new PrefixUnavailable({
    path: "/data",
    reason: "InsideBase",
    fault: corrupt,
    baseRecords: 1,
    baseRecordCount: 3,
  }),
  CopyVerificationFailed: new CopyVerificationFailed({ path: "/copy", detail: "differs" }),
  ListenFailed: new ServerError.ListenFailed({
    address: "/data/tay.sock",
    code: "EADDRINUSE",
    detail: "address in use",
  }),
  InvalidListen: new ServerError.InvalidListen({ value: "host:port:extra" }),
  ServedFailure: new ServedFailure({
    reason: "Rejected",
    socket: "/data/tay.sock",
    detail: "InvalidTransition: job 1 is cancelled: CancelJob is not allowed",
  }),
  NotServed: new NotServed({ path: "/data" }),
  BulkStopped: new BulkStopped({ path: "/data", cause: disk }),
  JobNotCompleted: new JobNotCompleted({
    path: "/data",
    jobId: 4,
    state: "discarded",
    detail: "smtp said no",
  }),
  WaitFailed: new WaitFailed({ path: "/data/tay.sock", jobId: 4, cause: new Error("closed") }),
  RecordNotKept: new RecordNotKept({ path: "/data", jobId: 12 }),
};

const linePattern = /^tay: [A-Za-z0-9]+( \S+)?( at offset \d+)?( sequence \d+)?: [^\n]+$/;

describe("errorLine", () => {
  it("gives every failure kind exactly one well-formed line", () => {
    for (const [tag, failure] of Object.entries(samples)) {
      const line = Errors.errorLine(failure);
      expect(line, tag).toMatch(linePattern);
      // The library's own message is the whole line: the CLI adds only "tay: ".
      expect(`tay: ${failure.message}`, tag).toBe(line);
      expect(String(failure), tag).toContain(failure.message);
      expect(Errors.exitOf(failure), tag).toBe(
        ["UsageError", "InvalidOption", "InvalidArgument", "InvalidListen"].includes(tag) ? 2 : 1,
      );
      // Only a usage error, an event the codec refuses, a decider's refusal and an engine's
      // refusals of an argument or of one command too many, and a bad listen address concern no file.
      const noFile = [
        "UsageError",
        "UnencodableEvent",
        "Rejected",
        "InvalidArgument",
        "Overloaded",
        "InvalidListen",
      ];
      if (!noFile.includes(tag)) {
        expect(failure.description.path, tag).toBeDefined();
      }
    }
  });

  it("names the most specific reason", () => {
    const reasons = Object.fromEntries(
      Object.entries(samples).map(([tag, failure]) => [tag, failure.description.reason]),
    );
    expect(reasons).toMatchObject({
      CorruptRecord: "RecordChecksum",
      MalformedFile: "ChecksumMismatch",
      InvalidSegment: "MissingFooter",
      UndecodableEvent: "UnknownEvent",
      HistoryRejected: "UnknownJob",
      Rejected: "RevisionMismatch",
      DiskError: "ENOSPC",
      WriterFailed: "WriterFailed",
      Locked: "Locked",
      IncompleteTail: "IncompleteTail",
      PrefixUnavailable: "RecordChecksum",
    });
  });

  it("says that a command over many jobs that stopped keeps what it did", () => {
    expect(Errors.errorLine(samples.BulkStopped)).toBe(
      `tay: ENOSPC ${segment}: write failed: no space left; the jobs changed before it stay changed; run the command again to do the rest`,
    );
    expect(
      Errors.errorLine(new BulkStopped({ path: "/data", cause: samples.IncompleteTail })),
    ).toMatch(
      /; tay copy-prefix copies the valid prefix to a new store; the jobs changed before it stay changed; run the command again to do the rest$/,
    );
    expect(Errors.errorLine(new BulkStopped({ path: "/data", cause: "boom" }))).toBe(
      "tay: Defect /data: boom; the jobs changed before it stay changed; run the command again to do the rest",
    );
  });

  it("places path, offset and sequence, and points segment faults at copy-prefix", () => {
    expect(Errors.errorLine(samples.IncompleteTail)).toBe(
      `tay: IncompleteTail ${segment} at offset 900 sequence 12: the segment ends inside a record (a torn tail); nothing was changed; tay copy-prefix copies the valid prefix to a new store`,
    );
    expect(Errors.errorLine(samples.Locked)).toBe(
      `tay: Locked /data/LOCK: held by pid 42 on box since 1970-01-01T00:00:00.000Z (session ${"ab".repeat(16)})`,
    );
    expect(Errors.errorLine(samples.BudgetExceeded)).toMatch(/^tay: BudgetExceeded \/somewhere: /);
    expect(Errors.errorLine(samples.UsageError)).toBe(
      "tay: UsageError: Unknown option '--bogus' (see tay help jobs)",
    );
    expect(Errors.errorLine(samples.PrefixUnavailable)).toContain(
      "inside the canonical base (1 of 3 base records are valid)",
    );
    expect(Errors.errorLine(samples.PrefixUnavailable)).not.toContain("tay copy-prefix");
    expect(Errors.errorLine(samples.DiskError)).toBe(
      `tay: ENOSPC ${segment}: write failed: no space left`,
    );
  });
});
