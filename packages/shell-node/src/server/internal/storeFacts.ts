/**
 * What the server shows about the store under the engine beyond the log's
 * view: its pressure, its segments, its leftover generations, and a
 * compaction's report in the wire's shape. The file store has all of them;
 * another log (PostgreSQL) says what it has (see `Server.serveLog`).
 */
import type { Wire } from "@tay/client";

/** The store's facts, for the status route, the metrics and the compaction route. */
export interface StoreFacts {
  /** Generation bytes over the store's capacity, 0..1 (0 where the store sets none). */
  readonly pressure: () => number;
  /** Segment files of the current generation (0 where the store keeps none). */
  readonly segments: () => number;
  /** Generations other than the current one, as open found them. */
  readonly orphanedGenerations: ReadonlyArray<{ readonly epoch: number; readonly kind: string }>;
  /** Compacts through the served engine (terminal jobs finished before now - retentionMs). */
  readonly compact: (retentionMs: number) => Promise<Wire.Compaction>;
}
