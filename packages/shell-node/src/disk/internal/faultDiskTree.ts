/**
 * The fault disk's steps on the volatile tree, one per path operation: each
 * checks in the order Linux does and returns the errno it would, else makes
 * its change (volatile until the directory or file is synced).
 */
import type * as Disk from "../Disk.js";
import * as Either from "effect/Either";
import { DirectoryNode, FileNode, type Node } from "./faultDiskModel.js";
import { componentsOf, findNode, findParent, type Refusal, refuse } from "./faultDiskPaths.js";

/** open(O_CREAT|O_EXCL): a new empty file, EEXIST when the name is taken. */
export const createFile = (root: DirectoryNode, path: string): Either.Either<FileNode, Refusal> =>
  Either.flatMap(findParent(root, componentsOf(path)), ({ parent, name }) => {
    if (parent.entries.has(name)) return refuse("EEXIST", "file exists");
    const node = new FileNode(new Uint8Array(0), new Uint8Array(0));
    parent.apply({ assignments: [[name, node]] });
    return Either.right(node);
  });

/** open(2) of an existing file: EISDIR for a directory. */
export const existingFile = (root: DirectoryNode, path: string): Either.Either<FileNode, Refusal> =>
  Either.flatMap(findNode(root, componentsOf(path)), (node) =>
    node._tag === "Directory" ? refuse("EISDIR", "a directory is not a file") : Either.right(node),
  );

/** A copy of a whole file's volatile contents. */
export const readFileBytes = (
  root: DirectoryNode,
  path: string,
): Either.Either<Uint8Array, Refusal> =>
  Either.flatMap(findNode(root, componentsOf(path)), (node) =>
    node._tag === "Directory"
      ? refuse("EISDIR", "illegal operation on a directory")
      : Either.right(node.contents.snapshot()),
  );

/** Whether `member` is `tree` or lies anywhere under it. */
const contains = (tree: Node, member: DirectoryNode): boolean => {
  if (tree === member) return true;
  if (tree._tag === "File") return false;
  for (const child of tree.entries.values()) if (contains(child, member)) return true;
  return false;
};

const checkReplaceable = (node: Node, replaced: Node): Either.Either<void, Refusal> => {
  if (node._tag === "File" && replaced._tag === "Directory") {
    return refuse("EISDIR", "cannot replace a directory with a file");
  }
  if (node._tag === "Directory" && replaced._tag === "File") {
    return refuse("ENOTDIR", "cannot replace a file with a directory");
  }
  if (replaced._tag === "Directory" && replaced.entries.size > 0) {
    return refuse("ENOTEMPTY", "directory not empty");
  }
  return Either.void;
};

/** rename(2): checks in Linux's order, then one atomic entry change per directory involved. */
export const renameNodes = (
  root: DirectoryNode,
  source: string,
  target: string,
): Either.Either<void, Refusal> =>
  Either.gen(function* () {
    // Linux resolves both parent directories before it looks the source up.
    const from = yield* findParent(root, componentsOf(source));
    const to = yield* findParent(root, componentsOf(target));
    const node = from.parent.entries.get(from.name);
    if (node === undefined) return yield* refuse("ENOENT", "no such file or directory");
    const replaced = to.parent.entries.get(to.name);
    if (replaced === node) return;
    if (node._tag === "Directory" && contains(node, to.parent)) {
      return yield* refuse("Other", "EINVAL: a directory cannot move into itself");
    }
    if (replaced !== undefined) yield* checkReplaceable(node, replaced);
    if (from.parent === to.parent) {
      from.parent.apply({
        assignments: [
          [from.name, undefined],
          [to.name, node],
        ],
      });
    } else {
      from.parent.apply({ assignments: [[from.name, undefined]] });
      to.parent.apply({ assignments: [[to.name, node]] });
    }
  });

/**
 * link(2), checked in Linux's order (the source, then the new name, then
 * that the source is not a directory): a new entry naming the same inode,
 * a change of the target's directory like a create (volatile until that
 * directory is synced; a crash keeps it or drops it).
 */
export const linkNodes = (
  root: DirectoryNode,
  source: string,
  target: string,
): Either.Either<void, Refusal> =>
  Either.gen(function* () {
    const node = yield* findNode(root, componentsOf(source));
    const to = yield* findParent(root, componentsOf(target));
    if (to.parent.entries.has(to.name)) return yield* refuse("EEXIST", "file exists");
    if (node._tag === "Directory") {
      return yield* refuse("EPERM", "a directory cannot be hard-linked");
    }
    to.parent.apply({ assignments: [[to.name, node]] });
  });

/** unlink(2), or a directory's removal when `recursive` (its whole subtree goes with it). */
export const removeEntry = (
  root: DirectoryNode,
  path: string,
  recursive: boolean,
): Either.Either<void, Refusal> =>
  Either.flatMap(findParent(root, componentsOf(path)), ({ parent, name }) => {
    const node = parent.entries.get(name);
    if (node === undefined) return refuse("ENOENT", "no such file or directory");
    if (node._tag === "Directory" && !recursive) return refuse("EISDIR", "is a directory");
    parent.apply({ assignments: [[name, undefined]] });
    return Either.void;
  });

/** A directory's entry names, sorted by UTF-16 code units as the interface promises. */
export const listEntries = (
  root: DirectoryNode,
  path: string,
): Either.Either<ReadonlyArray<string>, Refusal> =>
  Either.flatMap(findNode(root, componentsOf(path)), (node) =>
    node._tag === "File"
      ? refuse("ENOTDIR", "not a directory")
      : Either.right([...node.entries.keys()].sort()),
  );

/** stat(2): the type and, for a file, its volatile size. */
export const statNode = (root: DirectoryNode, path: string): Either.Either<Disk.Stat, Refusal> =>
  Either.map(
    findNode(root, componentsOf(path)),
    (node): Disk.Stat =>
      node._tag === "File"
        ? { type: "file", size: node.contents.size }
        : { type: "directory", size: 0 },
  );

/** mkdir(2): a new empty directory, EEXIST when the name is taken. */
export const makeDirectoryEntry = (
  root: DirectoryNode,
  path: string,
): Either.Either<void, Refusal> =>
  Either.flatMap(findParent(root, componentsOf(path)), ({ parent, name }) => {
    if (parent.entries.has(name)) return refuse("EEXIST", "file exists");
    parent.apply({ assignments: [[name, new DirectoryNode()]] });
    return Either.void;
  });

/** fsync(2) of a directory: its volatile entries become durable. */
export const syncDirectoryNode = (
  root: DirectoryNode,
  path: string,
): Either.Either<void, Refusal> =>
  Either.flatMap(findNode(root, componentsOf(path)), (node) => {
    if (node._tag === "File") return refuse("ENOTDIR", "not a directory");
    node.sync();
    return Either.void;
  });

/** The lock file at `path`, created (as a volatile entry) when missing, as open(O_CREAT) does. */
export const lockFileNode = (root: DirectoryNode, path: string): Either.Either<FileNode, Refusal> =>
  Either.flatMap(findParent(root, componentsOf(path)), ({ parent, name }) => {
    const existing = parent.entries.get(name);
    if (existing?._tag === "Directory") return refuse("EISDIR", "is a directory");
    if (existing !== undefined) return Either.right(existing);
    const created = new FileNode(new Uint8Array(0), new Uint8Array(0));
    parent.apply({ assignments: [[name, created]] });
    return Either.right(created);
  });
