/**
 * What commits let go of that the terminal index has not written yet,
 * held as the index's own entries, encoded: the whole records of jobs that
 * left the lean state, and results recorded for jobs written before. The
 * engine's queries decode them from here until the index holds them.
 *
 * Encoded at the commit, not kept as job objects until the write (as
 * before 2026-12-05): a job record held until a batch's write outlived the
 * young generation (a gain of about 2% for one `Throughput` worker, and a
 * pending job is its entry's bytes; docs/engine.md, "Amended 2026-12-05:
 * entries encoded at the commit"). Entries go into the open chunk; a drain seals it (a new one opens) and writes it
 * whole, then lets go of what it holds.
 *
 * Memory lets go of an id only once the chunk that last set it is written:
 * a job redriven and let go of again, or given a result, by a commit in a
 * later chunk stays here. (Emptying it only when nothing was queued, as
 * before 2026-12-04, kept every job of a busy engine until a pause.)
 */
import type { Event, Job, Terminal } from "@tay/core";
import * as Either from "effect/Either";
import * as TerminalIndex from "../../store/TerminalIndex.js";

/** Entries encoded one after another (`bytes[0, length)`), where each starts, and its ids. */
export interface Chunk {
  readonly buffer: TerminalIndex.EntryBuffer;
  readonly placed: Array<TerminalIndex.Placed>;
}

/** Where the latest entry of one kind for an id is held. */
interface Held {
  chunk: Chunk;
  at: number;
}

const openChunk = (buffer: TerminalIndex.EntryBuffer): Chunk => {
  buffer.length = 0;
  return { buffer, placed: [] };
};

export class PendingTerminal {
  #open: Chunk = openChunk(TerminalIndex.entryBuffer());
  /** Chunks sealed and not written yet (a drain's, or one whose write failed). */
  readonly #sealed: Array<Chunk> = [];
  readonly #jobs = new Map<number, Held>();
  readonly #results = new Map<number, Held>();
  /** A written chunk's buffer, for the next chunk. */
  #spare: TerminalIndex.EntryBuffer | undefined = undefined;

  /** Ids held (jobs and results). */
  get size(): number {
    return this.#jobs.size + this.#results.size;
  }

  /** Entries in the open chunk (the drain's threshold counts them). */
  get openEntries(): number {
    return this.#open.placed.length;
  }

  /**
   * Encodes what one commit let go of into the open chunk; the reason it
   * does not encode (nothing is added then: no job a log held fails).
   */
  add(left: Terminal.Left): string | undefined {
    const chunk = this.#open;
    const placed = TerminalIndex.appendEntries(chunk.buffer, [left]);
    if (Either.isLeft(placed)) return placed.left;
    for (const entry of placed.right) {
      chunk.placed.push(entry);
      const held = entry.kind === "job" ? this.#jobs : this.#results;
      held.set(entry.jobId, { chunk, at: entry.offset });
    }
    return undefined;
  }

  /** The open chunk, sealed for a write, when it holds entries (a new one opens); else undefined. */
  seal(): Chunk | undefined {
    const chunk = this.#open;
    if (chunk.placed.length === 0) return undefined;
    this.#sealed.push(chunk);
    this.#open = openChunk(this.#spare ?? TerminalIndex.entryBuffer());
    this.#spare = undefined;
    return chunk;
  }

  /** Every chunk sealed and not written, and the open one sealed: what a rebuild from the log holds. */
  sealAll(): ReadonlyArray<Chunk> {
    this.seal();
    return [...this.#sealed];
  }

  /** `chunk` is written (or a rebuild holds it): lets go of what no later chunk set. */
  written(chunk: Chunk): void {
    const index = this.#sealed.indexOf(chunk);
    if (index >= 0) this.#sealed.splice(index, 1);
    for (const { jobId, kind } of chunk.placed) {
      const held = kind === "job" ? this.#jobs : this.#results;
      if (held.get(jobId)?.chunk === chunk) held.delete(jobId);
    }
    if (chunk.buffer.bytes.length <= TerminalIndex.keptEntriesBytesMax) this.#spare = chunk.buffer;
  }

  /**
   * The whole record of a job not written yet, with a result held for it
   * (its own entry: a result is recorded only for a completed job, which
   * is never let go of again, so it is always the held job's); undefined
   * when none is held or its entry does not decode (none this encoded does).
   */
  job(jobId: number): Job.Job | undefined {
    const held = this.#jobs.get(jobId);
    if (held === undefined) return undefined;
    const entry = TerminalIndex.entryAt(held.chunk.buffer.bytes, held.at);
    if (entry._tag !== "Job") return undefined;
    const result = this.#heldResult(jobId);
    if (result === undefined) return entry.job;
    return { ...entry.job, result: { value: result.result, at: result.at } };
  }

  /** A result recorded for a job already written, not written itself yet. */
  result(jobId: number): Event.ResultRecorded | undefined {
    if (this.#jobs.has(jobId)) return undefined;
    return this.#heldResult(jobId);
  }

  #heldResult(jobId: number): Event.ResultRecorded | undefined {
    const held = this.#results.get(jobId);
    if (held === undefined) return undefined;
    const entry = TerminalIndex.entryAt(held.chunk.buffer.bytes, held.at);
    return entry._tag === "Result" ? entry.event : undefined;
  }
}
