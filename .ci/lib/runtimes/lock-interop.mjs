// The lock interoperability check of .ci/runtimes: for every pair of
// runtimes (the same one too), a process of the first holds the store
// (lock-role.mjs hold) while a process of the second tries to open it
// (lock-role.mjs try) and must be refused with `Locked` naming the holder's
// pid: one flock, whatever takes it (fs-ext, bun:ffi, Deno's FsFile).
//
//   node lock-interop.mjs DATA_DIR RUNTIMES_JSON
// RUNTIMES_JSON maps a name to the command that runs a script, e.g.
// {"node":["node"],"bun":["bun"],"deno":["deno","run","-A"]}; lock-role.mjs
// is looked up in the working directory.
import { spawn, spawnSync } from "node:child_process";

const [directory, runtimesText] = process.argv.slice(2);
const runtimes = Object.entries(JSON.parse(runtimesText));

const hold = (command) =>
  new Promise((resolve, reject) => {
    const holder = spawn(command[0], [...command.slice(1), "lock-role.mjs", "hold", directory], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    let output = "";
    holder.stdout.on("data", (chunk) => {
      output += chunk.toString();
      const match = /^held (\d+)\n/.exec(output);
      if (match !== null) resolve({ holder, pid: Number(match[1]) });
    });
    holder.on("exit", (code) => reject(new Error(`holder exited ${code}: ${output}`)));
  });

const release = (holder) =>
  new Promise((resolve) => {
    holder.removeAllListeners("exit");
    holder.on("exit", resolve);
    holder.stdin.end();
  });

let pairs = 0;
for (const [holderName, holderCommand] of runtimes) {
  const { holder, pid } = await hold(holderCommand);
  for (const [openerName, openerCommand] of runtimes) {
    const opener = spawnSync(
      openerCommand[0],
      [...openerCommand.slice(1), "lock-role.mjs", "try", directory],
      { encoding: "utf8" },
    );
    const said = opener.stdout.trim();
    if (said !== `refused by ${pid}`) {
      holder.kill("SIGKILL");
      throw new Error(
        `lock: a ${openerName} opener said "${said}" while ${holderName} (pid ${pid}) held the store; ${opener.stderr}`,
      );
    }
    pairs++;
  }
  await release(holder);
}
console.log(
  `lock: ${pairs} holder/opener pairs (${runtimes.map(([name]) => name).join(", ")}): every opener refused, Locked naming the holder's pid`,
);
