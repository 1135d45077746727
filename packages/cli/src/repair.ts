/**
 * `tay copy-prefix SRC DST`: the explicit repair. Copies the longest valid
 * prefix of SRC into a new store at DST, verifies it, and prints exactly
 * what was left out. SRC is never written.
 */
import * as Effect from "effect/Effect";
import { CopyPrefix } from "@tay/shell-node";
import { argument, type Command, exitCodes } from "./command.js";
import { errorJson } from "./describe.js";
import * as Json from "./json.js";
import { lines } from "./Terminal.js";
import * as Text from "./text.js";

const leftOutJson = (leftOut: CopyPrefix.LeftOut) => ({
  ...errorJson(leftOut.fault),
  path: leftOut.path,
  offset: leftOut.offset,
  sequence: leftOut.sequence,
  records: leftOut.records,
  bytes: leftOut.bytes,
  files: [...leftOut.files],
});

const reportJson = (report: CopyPrefix.CopyPrefixReport) => ({
  source: {
    path: report.source.path,
    store_id: report.source.storeId,
    epoch: report.source.epoch,
  },
  copied: {
    records: report.copied.records,
    first_sequence: report.copied.firstSequence,
    last_sequence: report.copied.lastSequence,
    jobs: report.copied.jobs,
    schedules: report.copied.schedules,
    last_job_id: report.copied.lastJobId,
  },
  left_out: report.leftOut === null ? null : leftOutJson(report.leftOut),
  target: {
    path: report.target.path,
    store_id: report.target.storeId,
    epoch: report.target.epoch,
    base_records: report.baseRecords,
    records: report.target.records,
    bytes: report.target.bytes,
    verified: true,
  },
});

const leftOutLines = (leftOut: CopyPrefix.LeftOut): Array<string> => {
  const reason = leftOut.fault.description;
  const records =
    leftOut.records === null
      ? "an unknown number of records (corrupt bytes hide what follows)"
      : `${leftOut.records} record(s)`;
  return [
    `left out: ${leftOut.path} from offset ${leftOut.offset} (sequence ${leftOut.sequence} on)`,
    `          ${records}, ${leftOut.bytes} byte(s)${leftOut.files.length === 0 ? "" : `, including ${leftOut.files.length} later segment file(s) whole`}`,
    ...leftOut.files.map((file) => `          ${file}`),
    `reason:   ${reason.reason}: ${reason.explanation}`,
  ];
};

const reportLines = (report: CopyPrefix.CopyPrefixReport): Array<string> => {
  const { copied, source, target } = report;
  return [
    `copied ${copied.records} record(s) of ${source.path} (store ${source.storeId}, epoch ${source.epoch}, sequences ${copied.firstSequence}..${copied.lastSequence})`,
    ...Text.fields([
      ["jobs", `${copied.jobs} (last job id ${copied.lastJobId})`],
      ["schedules", `${copied.schedules}`],
    ]),
    ...(report.leftOut === null
      ? ["left out: nothing (every record of the generation is valid)"]
      : leftOutLines(report.leftOut)),
    `written:  ${target.path} (new store ${target.storeId}, epoch ${target.epoch}, ${report.baseRecords} base record(s), ${Text.bytes(target.bytes)})`,
    `verified: ${target.path} folds to the copied state; ${source.path} was not modified`,
  ];
};

/** `tay copy-prefix SRC DST`. */
export const copyPrefix: Command = {
  name: "copy-prefix",
  synopsis: "SRC DST [--json]",
  summary:
    "repair: copy SRC's longest valid prefix into a new store at DST and say what was left out",
  arguments: ["SRC", "DST"],
  options: [],
  run: (input) =>
    Effect.gen(function* () {
      const report = yield* CopyPrefix.copyPrefix(argument(input, 0), argument(input, 1));
      yield* input.json ? lines([Json.line(reportJson(report))]) : lines(reportLines(report));
      return exitCodes.ok;
    }),
};
