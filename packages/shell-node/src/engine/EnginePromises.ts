/**
 * The engine's promise face, for applications not written with Effect.
 *
 * Every command behaves exactly as its Effect twin on `EngineService` (same
 * queue, same drain, same durability wait) but is answered by settling a
 * promise instead of resuming a fiber: no fiber, runtime or scope is made
 * per command, which is most of what `Effect.runPromise(engine.insert(..))`
 * costs on a busy queue. A promise rejects with the typed error its Effect
 * twin fails with (`Rejected`, `WriterFailed`, `PendingFull`, ...: tagged
 * `Error`s, told apart by `_tag`), and with the defect itself on a bug.
 * Reads are synchronous: they read the committed state in memory, and a
 * completed job that left it from the terminal index on the caller's
 * thread (docs/engine.md, "Queries over the terminal index").
 */
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import type * as Layer from "effect/Layer";
import * as Scope from "effect/Scope";
import type { Disk } from "../disk/Disk.js";
import * as NodeDisk from "../disk/NodeDisk.js";
import type * as Log from "../log/Log.js";
import * as Engine from "./Engine.js";
import type { EngineOptions, EngineReport, FileLogKind } from "./Engine.js";
import { runToPromise } from "./internal/runToPromise.js";

/** Every engine command as a promise, every query as a synchronous read. */
export type EnginePromises<K extends Log.Kind = FileLogKind> = Engine.PromiseFace<K>;

/** How `open` opens: the engine's options, and the disk (Node's by default). */
export interface OpenOptions extends EngineOptions {
  /** The file-system service; a test passes the testkit's `FaultDisk` layer. */
  readonly disk?: Layer.Layer<Disk>;
}

/** An engine opened outside Effect: its promise face, its report, and `close`. */
export interface OpenedEngine extends EnginePromises {
  readonly report: EngineReport;
  /** The store, read-only: reads, stats; nothing that appends. */
  readonly log: Engine.EngineService["log"];
  /** The Effect face of the same engine, for callers that mix both. */
  readonly engine: Engine.EngineService;
  /**
   * Drains what is pending, closes the store and releases the lock. Safe to
   * call twice. Commands issued after it reject with `StoreClosed`.
   */
  readonly close: () => Promise<void>;
}

/**
 * Opens the engine on the store in `directory` for a program not written
 * with Effect: what `Engine.open` does in a scope, with a promise that
 * rejects with the same typed errors (`Locked`, `IncompleteTail`,
 * `StoreNotFound`, ...: tagged `Error`s, told apart by `_tag`).
 */
export const open = async (directory: string, options: OpenOptions = {}): Promise<OpenedEngine> => {
  const { disk = NodeDisk.layer, ...engineOptions } = options;
  const scope = Effect.runSync(Scope.make());
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void));
  try {
    const engine = await runToPromise(
      Effect.provide(Scope.extend(Engine.open(directory, engineOptions), scope), disk),
    );
    return { ...engine.promises, report: engine.report, log: engine.log, engine, close };
  } catch (error) {
    // What the open acquired (the lock, the store) is released before the refusal.
    await close();
    throw error;
  }
};
