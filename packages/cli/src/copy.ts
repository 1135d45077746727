/**
 * `tay copy SRC DST`: moves a whole store from a directory into a new
 * PostgreSQL store (docs/postgres.md, "The CLI"), so that outgrowing the
 * embedded store loses no history: the same generation (first sequence,
 * base record count) and every record under its own sequence, then the
 * copy folded and compared with the source. SRC is only read.
 */
import { Effect } from "effect";
import { argument, type Command, exitCodes, usage } from "./command.js";
import * as Json from "./json.js";
import { copyToPg, isUrl } from "./postgres.js";
import { line, lines } from "./Terminal.js";
import * as Text from "./text.js";

/** `tay copy DIR postgres://...`. */
export const copy: Command = {
  name: "copy",
  synopsis: "SRC DST [--json]",
  summary:
    "copy the store in directory SRC into a new PostgreSQL store at URL DST, records unchanged",
  arguments: ["SRC", "DST"],
  options: [],
  run: (input) =>
    Effect.gen(function* () {
      const source = argument(input, 0);
      const target = argument(input, 1);
      if (isUrl(source) || !isUrl(target)) {
        return yield* usage(
          input,
          "copy moves a directory's store into PostgreSQL: SRC a directory, DST a postgres:// URL (the other direction is not supported yet)",
        );
      }
      const report = yield* copyToPg(source, target);
      if (input.json) {
        yield* line(
          Json.line({
            source: report.source,
            target: report.target,
            store_id: report.storeId,
            first_sequence: report.firstSequence,
            last_sequence: report.lastSequence,
            base_record_count: report.baseRecordCount,
            records: report.records,
            jobs: report.jobs,
            schedules: report.schedules,
          }),
        );
        return exitCodes.ok;
      }
      yield* lines([
        `copied ${report.source} to ${report.target} (store ${report.storeId})`,
        ...Text.fields([
          [
            "records",
            `${report.records} (sequences ${report.firstSequence}..${report.lastSequence}, ${report.baseRecordCount} of them the base)`,
          ],
          ["jobs", `${report.jobs}`],
          ["schedules", `${report.schedules}`],
          ["verified", "the copy folds to the source's state"],
        ]),
      ]);
      return exitCodes.ok;
    }),
};
