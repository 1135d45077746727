/**
 * The fault disk's test controls that bypass the operation log: seeding
 * durable files and directories, settling everything, and views of the
 * volatile and durable contents.
 */
import { DirectoryNode, FileNode, rebuild, walk } from "./faultDiskModel.js";
import { componentsOf, normalize } from "./faultDiskPaths.js";
import { makeRandom } from "./faultDiskRandom.js";

/** Creates a directory and its missing parents, durably; throws if a component is a file. */
export const seedDirectory = (root: DirectoryNode, rawPath: string): DirectoryNode => {
  let directory = root;
  for (const name of componentsOf(rawPath)) {
    const child = directory.entries.get(name);
    if (child?._tag === "File") throw new Error(`seedDirectory ${rawPath}: ${name} is a file`);
    if (child !== undefined) {
      directory = child;
      continue;
    }
    const created = new DirectoryNode();
    directory.seed(name, created);
    directory = created;
  }
  return directory;
};

/** Creates or replaces a file with `bytes`, durably, parents included. */
export const seedFile = (root: DirectoryNode, rawPath: string, bytes: Uint8Array): void => {
  const path = normalize(rawPath);
  const parentPath = path.slice(0, path.lastIndexOf("/"));
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (name === "") throw new Error(`seedFile ${rawPath}: not a file path`);
  const parent = seedDirectory(root, parentPath);
  if (parent.entries.get(name)?._tag === "Directory") {
    throw new Error(`seedFile ${rawPath}: is a directory`);
  }
  parent.seed(name, new FileNode(bytes, bytes));
};

/** Makes everything durable, as a clean shutdown would. */
export const settle = (root: DirectoryNode): void => {
  root.sync();
  for (const [, node] of walk(root)) node.sync();
};

/** Every file's volatile contents in `tree`, by path. */
export const filesOf = (tree: DirectoryNode): ReadonlyMap<string, Uint8Array> => {
  const files = new Map<string, Uint8Array>();
  for (const [path, node] of walk(tree)) {
    if (node._tag === "File") files.set(path, node.contents.snapshot());
  }
  return files;
};

/** Every file's durable contents: what a crash without tearing keeps. */
export const durableFilesOf = (root: DirectoryNode): ReadonlyMap<string, Uint8Array> =>
  filesOf(rebuild(root, { tear: "none", unsyncedEntries: "lost", random: makeRandom(0) }));

/** Every volatile path, sorted; directories end with `/`. */
export const listingOf = (root: DirectoryNode): ReadonlyArray<string> =>
  walk(root)
    .map(([path, node]) => (node._tag === "Directory" ? `${path}/` : path))
    .sort();
