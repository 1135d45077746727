/**
 * The fault disk's `DiskService`: each operation normalizes its paths, then
 * runs one step of the tree model through the disk's runner (power, faults,
 * log).
 */
import type * as Disk from "../Disk.js";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { makeFileHandle } from "./faultDiskFileHandle.js";
import { lock } from "./faultDiskLock.js";
import { attempt } from "./faultDiskLog.js";
import type { DirectoryNode, FileNode } from "./faultDiskModel.js";
import { normalize, type Refusal } from "./faultDiskPaths.js";
import type { Run } from "./faultDiskRunner.js";
import type { Space } from "./faultDiskSpace.js";
import * as Tree from "./faultDiskTree.js";

/** What the operations of one disk share: its tree, runner, space and held locks. */
export interface Model {
  readonly root: DirectoryNode;
  readonly run: Run;
  readonly space: Space;
  readonly locks: Set<FileNode>;
}

const open = (
  model: Model,
  rawPath: string,
  mode: Disk.OpenMode,
  options: Disk.OpenOptions = {},
): Effect.Effect<Disk.FileHandle, Disk.DiskError> => {
  const path = normalize(rawPath);
  const dataSync = options.dataSync === true && mode !== "read";
  return model.run(attempt("open", path, { mode }, mode === "createExclusive"), () =>
    Either.map(
      mode === "createExclusive"
        ? Tree.createFile(model.root, path)
        : Tree.existingFile(model.root, path),
      (node) => makeFileHandle(model.run, model.space, node, path, mode, dataSync),
    ),
  );
};

// The model keeps create and write as two operations (two cut points): a
// power loss may keep the entry without the bytes. Only a process kill,
// which this model does not distinguish, benefits from the single step.
const create = (model: Model, rawPath: string, bytes: Uint8Array) =>
  Effect.flatMap(open(model, rawPath, "createExclusive"), (handle) => {
    const writeFrom = (position: number): Effect.Effect<Disk.FileHandle, Disk.DiskError> =>
      position >= bytes.length
        ? Effect.succeed(handle)
        : Effect.flatMap(handle.write(position, bytes.subarray(position)), (count) =>
            writeFrom(position + count),
          );
    return Effect.tapError(writeFrom(0), () => Effect.ignore(handle.close()));
  });

/** Runs a step on one path that changes nothing (a read, a listing, a stat). */
const inspect = <A>(
  model: Model,
  kind: "readFile" | "readDirectory" | "stat",
  rawPath: string,
  step: (root: DirectoryNode, path: string) => Either.Either<A, Refusal>,
  bytesOf?: (value: A) => number,
): Effect.Effect<A, Disk.DiskError> => {
  const path = normalize(rawPath);
  return model.run(attempt(kind, path), () => step(model.root, path), bytesOf);
};

/** Runs a step that changes one path (a cut point). */
const change = (
  model: Model,
  kind: "remove" | "makeDirectory" | "syncDirectory",
  rawPath: string,
  step: (root: DirectoryNode, path: string) => Either.Either<void, Refusal>,
): Effect.Effect<void, Disk.DiskError> => {
  const path = normalize(rawPath);
  return model.run(attempt(kind, path, {}, true), () => step(model.root, path));
};

/** Runs a step from one path to another (rename, link; a cut point). */
const move = (
  model: Model,
  kind: "rename" | "link",
  rawSource: string,
  rawTarget: string,
  step: (root: DirectoryNode, source: string, target: string) => Either.Either<void, Refusal>,
): Effect.Effect<void, Disk.DiskError> => {
  const source = normalize(rawSource);
  const target = normalize(rawTarget);
  return model.run(attempt(kind, source, { target }, true), () => step(model.root, source, target));
};

/** The `DiskService` operations over `model`. */
export const makeDiskService = (model: Model): Disk.DiskService => ({
  open: (path, mode, options) => open(model, path, mode, options),
  create: (path, bytes) => create(model, path, bytes),
  readFile: (path) => inspect(model, "readFile", path, Tree.readFileBytes, (bytes) => bytes.length),
  rename: (source, target) => move(model, "rename", source, target, Tree.renameNodes),
  link: (source, target) => move(model, "link", source, target, Tree.linkNodes),
  remove: (path, options) =>
    change(model, "remove", path, (root, normalized) =>
      Tree.removeEntry(root, normalized, options?.recursive === true),
    ),
  readDirectory: (path) => inspect(model, "readDirectory", path, Tree.listEntries),
  stat: (path) => inspect(model, "stat", path, Tree.statNode),
  makeDirectory: (path) => change(model, "makeDirectory", path, Tree.makeDirectoryEntry),
  syncDirectory: (path) => change(model, "syncDirectory", path, Tree.syncDirectoryNode),
  lock: (path) => lock(model.run, model.root, model.locks, path),
});
