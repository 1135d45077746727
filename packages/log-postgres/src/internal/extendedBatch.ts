/**
 * Statements sent as one batch of PostgreSQL's extended query protocol, a
 * node-postgres `Submittable` (the interface pg-cursor uses): for each
 * statement Parse (only the first time a session sends its text: a
 * prepared statement, whose plan the server caches), Bind (its parameters)
 * and Execute, then one Sync. The server runs everything before the Sync
 * as one implicit transaction and commits it at the Sync (an error
 * discards the rest and rolls it back whole), then answers ReadyForQuery:
 * one round trip, and no statement text parsed or planned again.
 *
 * Why not node-postgres' `pipeline` option: it sends a Sync after every
 * statement, so a transaction needs BEGIN and COMMIT around them, six
 * statements and six answers where this sends four and waits for one
 * (measured: more client CPU than the simple-protocol script it replaces;
 * docs/benchmarks.md, 2026-12-02).
 */
import type pg from "pg";

/** A statement of a batch, its parameters mapped for the wire (text, or bytes sent as binary). */
export interface Wire {
  readonly text: string;
  /** Made for this batch alone (node-postgres takes a mutable array; nothing changes it). */
  readonly values: Array<string | Buffer | null>;
}

/** The statements a session has prepared: text → name. Names are never reused. */
export interface Prepared {
  readonly names: Map<string, string>;
  next: number;
  /** At most this many texts are prepared; the rest go as the unnamed statement, parsed each time. */
  readonly limit: number;
}

export const prepared = (limit: number): Prepared => ({ names: new Map(), next: 0, limit });

/**
 * What a batch gave back: each statement's row count, and its rows as the
 * fields of each (text, or null), in column order. The batch asks for no
 * description of them (no Describe): the caller knows its columns.
 */
export interface Answered {
  readonly counts: ReadonlyArray<number>;
  readonly rows: ReadonlyArray<ReadonlyArray<ReadonlyArray<unknown>>>;
}

/** What a batch ends with: what it gave back, or the error that ended it. */
export type Ended =
  | { readonly _tag: "Done"; readonly answered: Answered }
  | { readonly _tag: "Error"; readonly error: unknown };

/**
 * One batch. It ends at the first error, whether the server refused a
 * statement (it skips to the Sync, rolls back, and answers ReadyForQuery,
 * which node-postgres then keeps from this batch but waits for before it
 * sends anything else) or the connection is gone; else at ReadyForQuery.
 */
export class ExtendedBatch implements pg.Submittable {
  private readonly counts: Array<number> = [];
  private readonly rows: Array<Array<ReadonlyArray<unknown>>> = [[]];
  private ended = false;
  // Texts this batch parses under new names: kept only if the batch succeeded.
  private readonly parsing = new Map<string, string>();
  /** Set by the caller; node-postgres wraps it with its read timeout. */
  callback: (error: unknown, answered: Answered | undefined) => void = () => {};

  constructor(
    private readonly statements: ReadonlyArray<Wire>,
    private readonly cache: Prepared,
  ) {}

  /** The statement's name, parsing it first where this session has not (the unnamed one past the limit). */
  private nameOf(connection: pg.Connection, text: string): string {
    const known = this.cache.names.get(text) ?? this.parsing.get(text);
    if (known !== undefined) return known;
    const name =
      this.cache.names.size + this.parsing.size < this.cache.limit
        ? `tay_${this.cache.next++}`
        : "";
    if (name !== "") this.parsing.set(text, name);
    connection.parse({ name, text, types: [] }, false);
    return name;
  }

  submit(connection: pg.Connection): void {
    connection.stream.cork();
    try {
      for (const statement of this.statements) {
        const name = this.nameOf(connection, statement.text);
        connection.bind({ statement: name, values: statement.values }, false);
        connection.execute({}, false);
      }
      connection.sync();
    } finally {
      connection.stream.uncork();
    }
  }

  private end(ended: Ended): void {
    if (this.ended) return;
    this.ended = true;
    if (ended._tag === "Done") {
      for (const [text, name] of this.parsing) this.cache.names.set(text, name);
      this.callback(undefined, ended.answered);
    } else {
      // Which of its Parses the server took is unknown: their names are
      // never used again (a later batch parses the text under a new name).
      this.callback(ended.error, undefined);
    }
  }

  handleRowDescription(): void {}

  handleDataRow(message: { readonly fields: ReadonlyArray<unknown> }): void {
    this.rows[this.rows.length - 1]?.push(message.fields);
  }

  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}

  handleCommandComplete(message: { readonly text?: string }): void {
    // "UPDATE 1", "INSERT 0 3", "DELETE 2", "SELECT 1": the count is the last word.
    const text = message.text ?? "";
    const count = Number(text.slice(text.lastIndexOf(" ") + 1));
    this.counts.push(Number.isSafeInteger(count) ? count : 0);
    this.rows.push([]);
  }

  handleError(error: unknown): void {
    this.end({ _tag: "Error", error });
  }

  handleReadyForQuery(): void {
    this.end({ _tag: "Done", answered: { counts: this.counts, rows: this.rows } });
  }
}
