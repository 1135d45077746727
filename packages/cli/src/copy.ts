/**
 * `tay copy SRC DST`: moves a whole store between a directory and
 * PostgreSQL, either way (docs/postgres.md, "The CLI"), so that outgrowing
 * the embedded store, or leaving the database, loses no history: the same
 * generation (first sequence, base record count) and every record under
 * its own sequence and in its own bytes, then the copy folded and compared
 * with the source. SRC is only read; DST must not hold a store (a URL's
 * store name free: `StoreExists`; a directory missing or empty:
 * `NotEmpty`).
 */
import * as Effect from "effect/Effect";
import { argument, type Command, exitCodes, usage } from "./command.js";
import * as Json from "./json.js";
import { copyFromPg, copyToPg, isUrl } from "./postgres.js";
import { line, lines } from "./Terminal.js";
import * as Text from "./text.js";

/** `tay copy DIR postgres://...`. */
export const copy: Command = {
  name: "copy",
  synopsis: "SRC DST [--json]",
  summary:
    "copy a store between a directory and a postgres:// URL (either way) into a new store, records unchanged",
  arguments: ["SRC", "DST"],
  options: [],
  run: (input) =>
    Effect.gen(function* () {
      const source = argument(input, 0);
      const target = argument(input, 1);
      if (isUrl(source) === isUrl(target)) {
        return yield* usage(
          input,
          "copy moves a store between a directory and PostgreSQL: one of SRC and DST a directory, the other a postgres:// URL",
        );
      }
      const report = yield* isUrl(source) ? copyFromPg(source, target) : copyToPg(source, target);
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
