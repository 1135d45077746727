/**
 * @tay/shell-node — the Node shell of Tay: the file-system service, the
 * durable store (init, recovery, appends, reads, compaction), the engine and
 * the CLI. Every public module is exported as a namespace, as Effect does.
 */
export * as Disk from "./Disk.js";
export * as Entropy from "./Entropy.js";
export * as Init from "./Init.js";
export * as Layout from "./Layout.js";
export * as LockDescription from "./LockDescription.js";
export * as NodeDisk from "./NodeDisk.js";
export * as Projection from "./Projection.js";
export * as Recovery from "./Recovery.js";
export * as Stats from "./Stats.js";
export * as Store from "./Store.js";
export * as StoreError from "./StoreError.js";
export * as StoreOptions from "./StoreOptions.js";
export * as Engine from "./Engine.js";
export * as EnginePromises from "./EnginePromises.js";
export * as CopyPrefix from "./CopyPrefix.js";
