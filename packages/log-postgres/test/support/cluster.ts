/**
 * A PostgreSQL cluster the test owns, for the tests that crash the server:
 * `scripts/postgres.sh --cluster` starts it (installing Debian's
 * postgresql first when its binaries are missing; as root the cluster runs
 * as the non-root user `taypg`) and says where it is; `crash` SIGKILLs the
 * postmaster (then any backend still alive once it has had its chance to
 * notice), `start` brings it up again through crash recovery, `destroy`
 * stops it and removes its directory. Never the machine's shared server.
 */
import { execFile } from "node:child_process";
import { readdir, readFile, rm } from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

const script = fileURLToPath(new URL("../../scripts/postgres.sh", import.meta.url));

/** A private cluster, running. */
export interface Cluster {
  readonly url: string;
  readonly data: string;
  /** The running postmaster's pid (from `DATA/postmaster.pid`). */
  readonly postmaster: () => Promise<number>;
  /** SIGKILLs the postmaster and each of its backends; waits until all are gone. */
  readonly crash: () => Promise<void>;
  /** Starts the cluster again and waits until it accepts connections (after crash recovery). */
  readonly start: () => Promise<void>;
  /** Stops it (immediate) and removes its directory. */
  readonly destroy: () => Promise<void>;
}

/** KEY=VALUE lines as a map. */
const fields = (text: string): Map<string, string> =>
  new Map(
    text
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );

/** The pids whose parent is `parent` (from /proc: its `children` file, else every process's stat). */
const childrenOf = async (parent: number): Promise<Array<number>> => {
  const listed = await readFile(`/proc/${parent}/task/${parent}/children`, "utf8").catch(() => "");
  if (listed.trim() !== "") return listed.trim().split(/\s+/).map(Number);
  const children: Array<number> = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // pid (comm) state ppid ...: the comm may hold spaces, so split after its ")".
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (ppid === parent) children.push(Number(entry));
  }
  return children;
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until none of `pids` is alive, up to `ms`; returns those still alive. */
const awaitGone = async (pids: ReadonlyArray<number>, ms: number): Promise<Array<number>> => {
  const until = Date.now() + ms;
  for (;;) {
    const left = pids.filter(alive);
    if (left.length === 0 || Date.now() > until) return left;
    await sleep(20);
  }
};

/**
 * Starts a private cluster, or says why none could be started (no
 * PostgreSQL binaries and no way to install them, no /proc).
 */
export const privateCluster = async (): Promise<Cluster | { readonly skip: string }> => {
  let described: Map<string, string>;
  try {
    const { stdout } = await run("bash", [script, "--cluster"], { maxBuffer: 1 << 24 });
    described = fields(stdout);
  } catch (error) {
    const skip = `private PostgreSQL cluster not started: ${error instanceof Error ? error.message : String(error)}`;
    console.warn(skip);
    return { skip };
  }
  const url = described.get("url") ?? "";
  const data = described.get("data") ?? "";
  const bin = described.get("bin") ?? "";
  const user = described.get("user") ?? "";
  const log = described.get("log") ?? "";
  const pgCtl = (...args: Array<string>) =>
    user === ""
      ? run(path.join(bin, "pg_ctl"), args)
      : run("runuser", ["-u", user, "--", path.join(bin, "pg_ctl"), ...args]);
  const postmaster = async () =>
    Number((await readFile(path.join(data, "postmaster.pid"), "utf8")).split("\n")[0]);
  return {
    url,
    data,
    postmaster,
    crash: async () => {
      const pid = await postmaster();
      const backends = await childrenOf(pid);
      // The postmaster, then at once every backend it had: a backend left
      // alone would finish the statement it is running (a COMMIT included)
      // before it noticed, a gentler crash than a server's.
      process.kill(pid, "SIGKILL");
      for (const backend of backends) {
        try {
          process.kill(backend, "SIGKILL");
        } catch {
          // Gone already.
        }
      }
      await awaitGone([pid, ...backends], 10_000);
      // A backend forked since the listing exits once it notices (a new
      // postmaster refuses to start beside the old one's backends).
      const late = await childrenOf(pid);
      await awaitGone(late, 10_000);
    },
    start: async () => {
      await pgCtl("-D", data, "-l", log, "-w", "-t", "60", "start");
    },
    destroy: async () => {
      await pgCtl("-D", data, "-m", "immediate", "stop").catch(() => undefined);
      await rm(path.dirname(data), { recursive: true, force: true });
    },
  };
};
