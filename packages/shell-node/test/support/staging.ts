/**
 * What a crash left beside a copy's target (`CopyStaging`): the staging
 * directories in its parent, each checked to be one by its name, and
 * whether one holds CURRENT (a whole store, which the cleaning keeps).
 */
import { expect } from "@effect/vitest";
import { Effect } from "effect";
import type * as FaultDisk from "../../src/disk/FaultDisk.js";
import * as CopyStaging from "../../src/store/CopyStaging.js";
import * as Layout from "../../src/store/Layout.js";

/** The staging directories beside `target` in `parent`; any other entry but `others` fails the check. */
export const stagingDirectories = (
  disk: FaultDisk.FaultDisk,
  parent: string,
  target: string,
  others: ReadonlyArray<string>,
) =>
  Effect.gen(function* () {
    const names = (yield* disk.readDirectory(parent)).filter((name) => !others.includes(name));
    for (const name of names) expect(CopyStaging.isStagingName(target, name)).toBe(true);
    return names;
  });

/** Whether the staging directory `name` in `parent` holds CURRENT (a whole store, kept by the cleaning). */
export const holdsCurrent = (disk: FaultDisk.FaultDisk, parent: string, name: string) =>
  Effect.map(disk.readDirectory(`${parent}/${name}`), (entries) =>
    entries.includes(Layout.currentName),
  );
