/**
 * The fault-injecting, crash-modelling disk, re-exported from the shell's
 * disk layer (`@tay/shell-node/testing`), where it sits beside the `Disk`
 * contract it implements and the contract tests it passes.
 */
export * from "@tay/shell-node/testing/FaultDisk";
