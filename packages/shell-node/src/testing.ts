/**
 * @tay/shell-node/testing — the `Disk` contract's test doubles, beside the
 * contract they implement: `FaultDisk`, an in-memory disk that models what
 * a crash keeps and injects faults, and `Crash`, the harness that cuts a
 * workload at every write, sync, rename and link and checks what survives.
 * Kept out of the main entry: production code never loads them.
 */
export * as Crash from "./disk/Crash.js";
export * as FaultDisk from "./disk/FaultDisk.js";
