/**
 * The fault disk's space: the file size limit and the capacity, counted over
 * live files (reachable from the root, or unlinked but still open).
 */
import * as Either from "effect/Either";
import { type DirectoryNode, type FileNode, walk } from "./faultDiskModel.js";
import { type Refusal, refuse } from "./faultDiskPaths.js";

/** The limits of one disk and the open handles that keep unlinked files alive. */
export class Space {
  private readonly root: DirectoryNode;
  private readonly openHandles = new Map<FileNode, number>();
  readonly fileBytesMax: number;
  readonly capacityBytes: number | undefined;

  constructor(root: DirectoryNode, fileBytesMax: number, capacityBytes: number | undefined) {
    this.root = root;
    this.fileBytesMax = fileBytesMax;
    this.capacityBytes = capacityBytes;
  }

  /** Counts a handle opened (`delta` 1) or closed (`delta` -1) on `node`. */
  trackOpen(node: FileNode, delta: number): void {
    const count = (this.openHandles.get(node) ?? 0) + delta;
    if (count > 0) this.openHandles.set(node, count);
    else this.openHandles.delete(node);
  }

  /** EFBIG when a file would grow to `end` bytes beyond the file size limit. */
  checkFileEnd(end: number): Either.Either<void, Refusal> {
    return end > this.fileBytesMax
      ? refuse("Other", `EFBIG: beyond the fault disk's ${this.fileBytesMax}-byte file limit`)
      : Either.void;
  }

  /** How many of `length` bytes at `position` fit the file size limit and the capacity. */
  bytesThatFit(node: FileNode, position: number, length: number): Either.Either<number, Refusal> {
    return Either.flatMap(this.checkFileEnd(position + length), () => {
      const capacity = this.capacityBytes;
      if (capacity === undefined || length === 0) return Either.right(length);
      const endMax = node.contents.size + Math.max(0, capacity - this.usedBytes());
      const fitting = Math.max(0, Math.min(length, endMax - position));
      return fitting === 0 ? refuse("ENOSPC", "no space left on device") : Either.right(fitting);
    });
  }

  /** Bytes of live files: reachable now, or still open. */
  private usedBytes(): number {
    const live = new Set<FileNode>(this.openHandles.keys());
    for (const [, node] of walk(this.root)) if (node._tag === "File") live.add(node);
    let total = 0;
    for (const node of live) total += node.contents.size;
    return total;
  }
}
