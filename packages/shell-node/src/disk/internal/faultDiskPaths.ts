/**
 * Path resolution for the fault disk: absolute POSIX paths over the volatile
 * tree, with the errno codes Linux gives for a missing or non-directory
 * component.
 */
import { posix } from "node:path";
import type * as Disk from "../Disk.js";
import * as Either from "effect/Either";
import type { DirectoryNode, Node } from "./faultDiskModel.js";

/** Why an operation is refused: the errno code and a human detail. */
export interface Refusal {
  readonly code: Disk.DiskErrorCode;
  readonly detail: string;
}

export const refuse = (code: Disk.DiskErrorCode, detail: string): Either.Either<never, Refusal> =>
  Either.left({ code, detail });

/** The canonical absolute form of a path: relative paths are taken from `/`. */
export const normalize = (path: string): string => posix.resolve("/", path);

/** The names along a path from the root (`/` has none). */
export const componentsOf = (path: string): ReadonlyArray<string> =>
  normalize(path)
    .split("/")
    .filter((name) => name !== "");

/** The node at the end of `names`, every earlier one a directory. */
export const findNode = (
  root: DirectoryNode,
  names: ReadonlyArray<string>,
): Either.Either<Node, Refusal> => {
  let node: Node = root;
  for (const name of names) {
    if (node._tag === "File") return refuse("ENOTDIR", "a path component is a file");
    const child: Node | undefined = node.entries.get(name);
    if (child === undefined) return refuse("ENOENT", "no such file or directory");
    node = child;
  }
  return Either.right(node);
};

/** The directory that holds (or would hold) the last name of `names`, and that name. */
export const findParent = (
  root: DirectoryNode,
  names: ReadonlyArray<string>,
): Either.Either<{ readonly parent: DirectoryNode; readonly name: string }, Refusal> => {
  const name = names[names.length - 1];
  if (name === undefined) return refuse("Other", "EBUSY: the root directory");
  return Either.flatMap(findNode(root, names.slice(0, -1)), (parent) =>
    parent._tag === "Directory"
      ? Either.right({ parent, name })
      : refuse("ENOTDIR", "a path component is a file"),
  );
};
