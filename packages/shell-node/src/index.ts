/**
 * @tay/shell-node — the Node shell of Tay, in layers that only import
 * downward (docs/architecture.md):
 *
 * - disk: the file-system service (`Disk`, `NodeDisk`), the lock, errors
 *   that describe themselves;
 * - log: what the engine needs of a log (`Log`, `Projection`);
 * - store: the file store, the log's first implementation (init,
 *   recovery, inspection, options, compaction, repair);
 * - engine: the durable job queue (`Engine`, `EnginePromises`);
 * - worker: the runtime that runs jobs (`Worker`);
 * - server: the store served to other processes over HTTP (`Server`).
 *
 * Every public module is exported as a namespace, as Effect does. The test
 * doubles of the disk (`FaultDisk`, `Crash`) are in `@tay/shell-node/testing`.
 *
 * Nothing exported here appends a record the engine's deciders did not
 * produce: the raw store (`store/Store.ts`) and the file log are internal,
 * and the engine shows its log only as a read-only view. (`Import` writes
 * a whole new store from a history, and only one core's fold accepts.)
 */
export * as Described from "./disk/Described.js";
export * as Disk from "./disk/Disk.js";
export * as Entropy from "./disk/Entropy.js";
export * as Lock from "./disk/Lock.js";
export * as LockDescription from "./disk/LockDescription.js";
export * as NodeDisk from "./disk/NodeDisk.js";
export * as Batch from "./log/Batch.js";
export * as Log from "./log/Log.js";
export * as LogError from "./log/LogError.js";
export * as Projection from "./log/Projection.js";
export * as Ticket from "./log/Ticket.js";
export * as CopyCheck from "./store/CopyCheck.js";
export * as CopyPrefix from "./store/CopyPrefix.js";
export * as Import from "./store/Import.js";
export * as Init from "./store/Init.js";
export * as Layout from "./store/Layout.js";
export * as Recovery from "./store/Recovery.js";
export * as StateProjection from "./store/StateProjection.js";
export * as Stats from "./store/Stats.js";
export * as StoreError from "./store/StoreError.js";
export * as StoreOptions from "./store/StoreOptions.js";
export * as TerminalIndex from "./store/TerminalIndex.js";
export * as Engine from "./engine/Engine.js";
export * as EnginePromises from "./engine/EnginePromises.js";
export * as Bulk from "./engine/Bulk.js";
export * as JobEnd from "./engine/JobEnd.js";
export * as Worker from "./worker/Worker.js";
export * as Server from "./server/Server.js";
export * as ServerError from "./server/ServerError.js";
export * as ServerToken from "./server/Token.js";
export * as OpenApi from "./server/OpenApi.js";
export * as RemoteWorker from "./server/RemoteWorker.js";
export * as Metrics from "./server/Metrics.js";
export * as Dashboard from "./server/Dashboard.js";
