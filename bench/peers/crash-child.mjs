// The crashing half of the persistence check: inserts `jobs` jobs with 16
// producers into a fresh store of `settingId` in `directory`, prints
// `acknowledged N` once every insert has resolved, then kills its own
// process with SIGKILL (no close, no final sync). The parent reopens the
// data and counts.
//
//   node bench/peers/crash-child.mjs <settingId> <directory> <jobs>
import { runConcurrently, makeArgs } from "../../packages/shell-node/bench/lib/common.mjs";
import { settings, startSystem } from "./systems.mjs";

const [settingId, directory, jobsText] = process.argv.slice(2);
const setting = settings.find((candidate) => candidate.id === settingId);
if (setting === undefined || directory === undefined || setting.system === "BullMQ") {
  console.error(`usage: crash-child.mjs <tay-*|sqlite-*> <directory> <jobs>`);
  process.exit(2);
}
const jobs = Number(jobsText ?? 1000);
const driver = await startSystem(setting, directory);
const args = makeArgs();
let acknowledged = 0;
await runConcurrently(jobs, 16, async () => {
  await driver.insert("bench", args);
  acknowledged += 1;
});
process.stdout.write(`acknowledged ${acknowledged}\n`, () => process.kill(process.pid, "SIGKILL"));
