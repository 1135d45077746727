// The durability probe of .ci/runtimes, on one runtime (Linux): what the
// store relies on from `node:fs`, checked through NodeDisk itself where it
// can be. A runtime that differs fails here instead of silently weakening
// durability (docs/runtimes.md):
//   - a `dataSync` handle's descriptor really has O_DSYNC (read back from
//     /proc/self/fdinfo), and its writes and syncs succeed;
//   - a directory can be opened and fsynced (`syncDirectory`);
//   - hard links: `link` gives a second name, EEXIST when taken;
//   - `remove` refuses a directory with EISDIR and leaves it (Deno's own
//     `fs.unlink` would remove an empty one).
//
//   RUNTIME durability.mjs SCRATCH_DIR
import { constants, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { Effect } from "effect";
import { NodeDisk } from "@tay/shell-node";

const [scratch] = process.argv.slice(2);
if (scratch === undefined) throw new Error("usage: durability.mjs SCRATCH_DIR");
mkdirSync(scratch, { recursive: true });
const disk = NodeDisk.make;
const run = (effect) => Effect.runPromise(effect);
const check = (condition, what) => {
  if (!condition) throw new Error(`durability: ${what}`);
};

/** The open flags of this process's descriptor for `path`, from /proc. */
const openFlagsOf = (path) => {
  for (const fd of readdirSync("/proc/self/fd")) {
    let target;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (target !== path) continue;
    const flags = /flags:\s+([0-7]+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"));
    if (flags !== null) return Number.parseInt(flags[1], 8);
  }
  return null;
};

const segment = join(scratch, "segment");
const created = await run(disk.create(segment, new Uint8Array(16)));
await run(created.close());
const handle = await run(disk.open(segment, "readWrite", { dataSync: true }));
const flags = openFlagsOf(segment);
check(
  flags !== null && (flags & constants.O_DSYNC) !== 0,
  `O_DSYNC missing: flags ${flags?.toString(8)}`,
);
check(handle.dataSync, "the handle does not say dataSync");
check((await run(handle.write(0, new Uint8Array([1, 2, 3])))) === 3, "a short write");
await run(handle.sync());
await run(handle.close());

await run(disk.syncDirectory(scratch));

await run(disk.link(segment, join(scratch, "second")));
check(statSync(segment).nlink === 2, "link did not give a second name");
const taken = await run(Effect.flip(disk.link(segment, join(scratch, "second"))));
check(taken.code === "EEXIST", `link onto a taken name: ${taken.code}`);

const directory = join(scratch, "empty");
mkdirSync(directory);
const refused = await run(Effect.flip(disk.remove(directory)));
check(refused.code === "EISDIR", `remove of a directory: ${refused.code}`);
check(statSync(directory).isDirectory(), "remove of a directory removed it");

console.log(
  "durability: O_DSYNC set on dataSync handles, directory fsync, hard links, remove refuses directories",
);
