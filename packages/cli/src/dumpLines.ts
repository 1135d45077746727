/**
 * `tay dump`'s output, streamed: each batch of records the inspection
 * accepts is printed before the next is read, so a dump holds at most one
 * batch of lines (a store of 1,000,000 jobs, ~3,000,000 records, failed
 * with "Invalid string length" after 17 s and 1.3 GB when every line was
 * kept and joined at the end; docs/cli.md, 2026-12-06).
 *
 * Printing as it reads meets the read commands' retry (`retryTransient`:
 * a writer's torn tail or a compaction makes the inspection start over).
 * A line printed stays printed, so a retry that finds the same generation
 * goes on after the last sequence printed; one that finds another
 * generation (a compaction in between) cannot continue the lines already
 * out (the records between them and the new generation are in its
 * snapshot now), and stops with `CompactedWhileDumped`.
 *
 * The projection does not fold: the log is shown as it is, so a history
 * the fold would refuse still dumps (up to the first fault of the bytes).
 */
import type { Event } from "@tay/core";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type { Projection } from "@tay/shell-node";
import * as Json from "./json.js";
import { lines, type Terminal } from "./Terminal.js";

/** The dump has printed its `--limit` lines: the inspection stops there. */
export interface Enough {
  readonly _tag: "Enough";
}

/** A retried inspection found another generation than the one whose lines are out. */
export interface GenerationChanged {
  readonly _tag: "GenerationChanged";
  /** The epoch whose records were printed. */
  readonly printedEpoch: number;
  /** The last sequence printed. */
  readonly printedThrough: number;
  /** The epoch the retry found. */
  readonly foundEpoch: number;
}

/** Why the dump's projection stopped the inspection. */
export type DumpStop = Enough | GenerationChanged;

const enough: Enough = { _tag: "Enough" };

/** The lines of one dump: those waiting to be printed, and what is out already. */
export class DumpLines {
  private pending: Array<string> = [];
  private printed = 0;
  // The last sequence given a line, and its generation's epoch (undefined: none yet).
  private through = 0;
  private epoch: number | undefined = undefined;
  // The epoch of the inspection under way.
  private reading = 0;

  constructor(
    private readonly from: number,
    private readonly limit: number,
  ) {}

  /** The projection that gives each record from `from` on a line, up to `limit`. */
  readonly projection: Projection.Projection<null, DumpStop> = {
    start: (manifest) => {
      this.reading = manifest.epoch;
      return null;
    },
    apply: (state, sequence, event) => this.take(sequence, event, state),
  };

  private take(sequence: number, event: Event.Event, state: null): Either.Either<null, DumpStop> {
    if (sequence < this.from) return Either.right(state);
    if (this.epoch !== undefined && this.reading !== this.epoch) {
      return Either.left({
        _tag: "GenerationChanged",
        printedEpoch: this.epoch,
        printedThrough: this.through,
        foundEpoch: this.reading,
      });
    }
    // Given a line by an earlier try of the same generation.
    if (this.epoch !== undefined && sequence <= this.through) return Either.right(state);
    if (this.printed >= this.limit) return Either.left(enough);
    this.pending.push(Json.line(Json.record(sequence, event)));
    this.printed += 1;
    this.through = sequence;
    this.epoch = this.reading;
    return Either.right(state);
  }

  /** Prints the lines waiting (after each batch, and once the inspection ends). */
  flush(): Effect.Effect<void, never, Terminal> {
    return Effect.suspend(() => {
      const out = this.pending;
      this.pending = [];
      return lines(out);
    });
  }
}
