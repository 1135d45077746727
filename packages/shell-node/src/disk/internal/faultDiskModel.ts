/**
 * The fault disk's in-memory model: inodes with volatile and durable state,
 * and the reconstruction of the disk a crash leaves behind.
 *
 * A file inode has volatile contents (what reads see) and durable contents
 * (what survives a crash), plus the changes made since its last `sync`, in
 * order. A directory inode has volatile entries, durable entries and the
 * entry changes since its last `syncDirectory`. Entries point at inodes, so a
 * handle, a rename or an unlink never copies data.
 */
import type { Random } from "./faultDiskRandom.js";

/** A change to a file's contents not yet made durable. */
export type FileChange =
  | { readonly _tag: "Write"; readonly position: number; readonly bytes: Uint8Array }
  | { readonly _tag: "Truncate"; readonly size: number };

/**
 * A change to a directory's entries not yet made durable: assignments applied
 * together (a rename within one directory is one change, so it is atomic).
 * `undefined` removes the name.
 */
export interface EntryChange {
  readonly assignments: ReadonlyArray<readonly [string, Node | undefined]>;
}

/** A growable byte buffer: the volatile contents of a file. */
export class Contents {
  private bytes: Uint8Array;
  private length: number;

  constructor(initial: Uint8Array) {
    this.bytes = initial.slice();
    this.length = initial.length;
  }

  get size(): number {
    return this.length;
  }

  /** A copy of the contents. */
  snapshot(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }

  /** Bytes `[position, position + length)`, fewer at the end. */
  read(position: number, length: number): Uint8Array {
    const start = Math.min(position, this.length);
    const end = Math.min(position + length, this.length);
    return this.bytes.slice(start, end);
  }

  /** Writes at `position`, zero-filling any gap past the end (a sparse hole). */
  write(position: number, bytes: Uint8Array): void {
    // pwrite(2) of zero bytes changes nothing, even past the end.
    if (bytes.length === 0) return;
    const end = position + bytes.length;
    this.reserve(end);
    if (position > this.length) this.bytes.fill(0, this.length, position);
    this.bytes.set(bytes, position);
    this.length = Math.max(this.length, end);
  }

  truncate(size: number): void {
    this.reserve(size);
    if (size > this.length) this.bytes.fill(0, this.length, size);
    this.length = size;
  }

  replace(bytes: Uint8Array): void {
    this.bytes = bytes.slice();
    this.length = bytes.length;
  }

  private reserve(size: number): void {
    if (size <= this.bytes.length) return;
    // Doubling keeps a long run of appends linear.
    const grown = new Uint8Array(Math.max(size, this.bytes.length * 2, 64));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
}

export class FileNode {
  readonly _tag = "File";
  readonly contents: Contents;
  durable: Uint8Array;
  pending: Array<FileChange> = [];

  constructor(initial: Uint8Array, durable: Uint8Array) {
    this.contents = new Contents(initial);
    this.durable = durable.slice();
  }

  /** Applies a change to the volatile contents and remembers it until `sync`. */
  apply(change: FileChange): void {
    applyFileChange(this.contents, change);
    this.pending.push(change);
  }

  /** fdatasync: the volatile contents become durable. */
  sync(): void {
    this.durable = this.contents.snapshot();
    this.pending = [];
  }

  /** The fsyncgate failure: dirty pages are dropped, volatile reverts to durable. */
  dropDirtyPages(): void {
    this.contents.replace(this.durable);
    this.pending = [];
  }
}

export class DirectoryNode {
  readonly _tag = "Directory";
  readonly entries = new Map<string, Node>();
  durable = new Map<string, Node>();
  pending: Array<EntryChange> = [];

  /** Applies an entry change to the volatile entries and remembers it until `syncDirectory`. */
  apply(change: EntryChange): void {
    applyEntryChange(this.entries, change);
    this.pending.push(change);
  }

  /** fsync of the directory: its volatile entries become durable. */
  sync(): void {
    this.durable = new Map(this.entries);
    this.pending = [];
  }

  /** Sets an entry in both views at once (seeding a disk, not a modelled operation). */
  seed(name: string, node: Node): void {
    this.entries.set(name, node);
    this.durable.set(name, node);
  }
}

export type Node = FileNode | DirectoryNode;

const applyFileChange = (contents: Contents, change: FileChange): void => {
  switch (change._tag) {
    case "Write":
      contents.write(change.position, change.bytes);
      return;
    case "Truncate":
      contents.truncate(change.size);
      return;
    default: {
      const unreachable: never = change;
      throw new Error(`unknown file change ${JSON.stringify(unreachable)}`);
    }
  }
};

const applyEntryChange = (entries: Map<string, Node>, change: EntryChange): void => {
  for (const [name, node] of change.assignments) {
    if (node === undefined) entries.delete(name);
    else entries.set(name, node);
  }
};

/** Sector size of the "sector" tear: a torn write keeps whole sectors only. */
export const sectorBytes = 512;

/** How a crash treats file data that was never synced. */
export type TearMode = "none" | "sector" | "anywhere";

/** How a crash treats directory entries that were never synced. */
export type UnsyncedEntries = "lost" | "prefix";

/** What a crash keeps: the durable state plus, per object, a chosen prefix of its unsynced changes. */
export interface Persistence {
  readonly tear: TearMode;
  readonly unsyncedEntries: UnsyncedEntries;
  readonly random: Random;
}

/**
 * The contents a crash leaves in a file: its durable bytes, then (when
 * tearing) the first `kept` unsynced changes in order, and possibly a prefix
 * of the next one if it is a write.
 */
const survivingContents = (file: FileNode, persistence: Persistence): Uint8Array => {
  if (persistence.tear === "none" || file.pending.length === 0) return file.durable.slice();
  const contents = new Contents(file.durable);
  const kept = persistence.random.below(file.pending.length + 1);
  for (const change of file.pending.slice(0, kept)) applyFileChange(contents, change);
  const torn = file.pending[kept];
  if (torn?._tag === "Write" && torn.bytes.length > 0) {
    const cut = tornLength(torn, persistence.tear, persistence.random);
    if (cut > 0) contents.write(torn.position, torn.bytes.subarray(0, cut));
  }
  return contents.snapshot();
};

/** How many leading bytes of a torn write reach the disk. */
const tornLength = (
  write: { readonly position: number; readonly bytes: Uint8Array },
  tear: "sector" | "anywhere",
  random: Random,
): number => {
  const cut = random.below(write.bytes.length);
  if (tear === "anywhere") return cut;
  const sectorEnd = Math.floor((write.position + cut) / sectorBytes) * sectorBytes;
  return Math.max(0, sectorEnd - write.position);
};

/** The entries a crash leaves in a directory: durable ones plus a prefix of the unsynced changes. */
const survivingEntries = (
  directory: DirectoryNode,
  persistence: Persistence,
): ReadonlyMap<string, Node> => {
  if (persistence.unsyncedEntries === "lost" || directory.pending.length === 0) {
    return directory.durable;
  }
  const entries = new Map(directory.durable);
  const kept = persistence.random.below(directory.pending.length + 1);
  for (const change of directory.pending.slice(0, kept)) applyEntryChange(entries, change);
  return entries;
};

const byName = (left: readonly [string, Node], right: readonly [string, Node]): number =>
  left[0] < right[0] ? -1 : left[0] > right[0] ? 1 : 0;

/**
 * The tree a crash leaves: new inodes holding only what survives, walked
 * from the root in name order (so a seed always makes the same choices).
 * An inode reached twice (a cross-directory rename persisted on both sides)
 * stays one inode; a directory reached again (a cycle or a second parent,
 * possible only when unsynced entries persist) is dropped the second time.
 */
export const rebuild = (root: DirectoryNode, persistence: Persistence): DirectoryNode => {
  const rebuilt = new Map<Node, Node>();
  const visit = (directory: DirectoryNode): DirectoryNode => {
    const copy = new DirectoryNode();
    rebuilt.set(directory, copy);
    const entries = [...survivingEntries(directory, persistence)].sort(byName);
    for (const [name, node] of entries) {
      const existing = rebuilt.get(node);
      if (existing !== undefined) {
        if (existing._tag === "File") copy.seed(name, existing);
        continue;
      }
      copy.seed(name, node._tag === "File" ? survivingFile(node) : visit(node));
    }
    return copy;
  };
  const survivingFile = (file: FileNode): FileNode => {
    const contents = survivingContents(file, persistence);
    const copy = new FileNode(contents, contents);
    rebuilt.set(file, copy);
    return copy;
  };
  return visit(root);
};

/** Every node of the volatile tree with its absolute path, parents before children, by name. */
export const walk = (root: DirectoryNode): ReadonlyArray<readonly [string, Node]> => {
  const found: Array<readonly [string, Node]> = [];
  const visit = (directory: DirectoryNode, prefix: string): void => {
    for (const [name, node] of [...directory.entries].sort(byName)) {
      const path = `${prefix}/${name}`;
      found.push([path, node]);
      if (node._tag === "Directory") visit(node, path);
    }
  };
  visit(root, "");
  return found;
};
