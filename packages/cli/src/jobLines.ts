/**
 * `tay jobs`'s output, a page at a time (`atRest.listed`): JSON as one
 * array written in pieces, the table with its columns as wide as the
 * header and the first page need (a later, wider cell widens its own row:
 * the widths of every row would need every row held first, 1.5 GB for
 * 1,000,000 completed jobs before 2026-12-06).
 *
 * A listing can start over (`withAtRest` folds the whole log when the
 * index fails a check mid-listing): rows come in order of id (ascending,
 * or newest first), so a page given again skips the ids already printed,
 * and `limit` counts rows printed, not rows given.
 */
import type { Job } from "@tay/core";
import * as Effect from "effect/Effect";
import * as Json from "./json.js";
import { lines, Terminal } from "./Terminal.js";
import * as Text from "./text.js";

const headers = [
  "ID",
  "STATE",
  "QUEUE",
  "WORKER",
  "PRI",
  "ATTEMPT",
  "SCHEDULED_AT",
  "FINISHED_AT",
  "SCHEDULE",
];

const align: ReadonlyArray<Text.Align> = ["right"];

const row = (job: Job.Job): Array<string> => [
  `${job.jobId}`,
  job.state,
  Text.printable(job.queue),
  Text.printable(job.worker),
  `${job.priority}`,
  `${job.attempt}/${job.maxAttempts}`,
  Text.time(job.scheduledAt),
  Text.time(job.finishedAt),
  job.scheduleId === null ? "-" : Text.printable(job.scheduleId),
];

/** The rows of one listing, printed as its pages come. */
export class JobLines {
  private printed = 0;
  private lastJobId = 0;
  // The table's column widths, set by its first page.
  private widths: ReadonlyArray<number> | undefined = undefined;

  constructor(
    private readonly json: boolean,
    private readonly limit: number,
    /** Newest first: a page given again skips ids at or above the last printed. */
    private readonly descending = false,
  ) {}

  /** Prints the jobs of `jobs` not printed yet, up to the limit. */
  page(jobs: ReadonlyArray<Job.Job>): Effect.Effect<void, never, Terminal> {
    return Effect.suspend(() => {
      const fresh: Array<Job.Job> = [];
      for (const job of jobs) {
        if (this.printed >= this.limit) break;
        if (
          this.printed > 0 &&
          (this.descending ? job.jobId >= this.lastJobId : job.jobId <= this.lastJobId)
        )
          continue;
        fresh.push(job);
        this.printed += 1;
        this.lastJobId = job.jobId;
      }
      if (fresh.length === 0) return Effect.void;
      return this.json ? this.jsonPage(fresh) : this.tablePage(fresh);
    });
  }

  /** Ends the output: the array's close, or the header of an empty table. */
  end(): Effect.Effect<void, never, Terminal> {
    return Effect.suspend(() => {
      if (this.json) return lines([this.printed === 0 ? "[]" : "]"]);
      return this.widths === undefined ? lines(Text.table(headers, [], align)) : Effect.void;
    });
  }

  /** The page's jobs in the array: `[` before the first, `,` between. */
  private jsonPage(jobs: ReadonlyArray<Job.Job>): Effect.Effect<void, never, Terminal> {
    const opening = this.printed === jobs.length ? "[" : ",";
    const items = jobs.map((job) => Json.line(Json.job(job))).join(",");
    return Effect.flatMap(Terminal, (terminal) => terminal.out(opening + items));
  }

  private tablePage(jobs: ReadonlyArray<Job.Job>): Effect.Effect<void, never, Terminal> {
    const rows = jobs.map(row);
    const first = this.widths === undefined;
    const widths = this.widths ?? Text.widths(headers, rows);
    this.widths = widths;
    const rendered = rows.map((cells) => Text.row(cells, widths, align));
    return lines(first ? [Text.row(headers, widths, align), ...rendered] : rendered);
  }
}
