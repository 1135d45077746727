// A private Redis for the BullMQ peer: Debian's `redis-server`, started by
// the benchmark on 127.0.0.1 on a free port with its own directory and an
// append-only file (`appendfsync always` or `everysec`), stopped at the end.
import { execFileSync, spawn } from "node:child_process";
import { createServer } from "node:net";

/** How long a start (AOF load included) may take. */
const readyTimeoutMs = 300_000;

// Every redis-server this process started and has not seen exit: killed when
// this process exits, even on an error, so no instance outlives the run.
const running = new Set();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => process.exit(130));
}

/** The path of redis-server, or a message telling how to install it. */
export const findRedisServer = () => {
  try {
    return { path: execFileSync("which", ["redis-server"], { encoding: "utf8" }).trim() };
  } catch {
    return {
      missing:
        "redis-server not found: install Redis 7 with `apt-get install -y redis-server` " +
        "(the benchmark starts its own instance; nothing needs to be running)",
    };
  }
};

/** A TCP port that was free a moment ago on 127.0.0.1. */
export const freePort = () =>
  new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === "object" && address ? address.port : 0));
    });
  });

/** Redis's version line (`redis-server --version`). */
export const redisVersion = (path) =>
  execFileSync(path, ["--version"], { encoding: "utf8" }).trim();

/**
 * Starts redis-server on `port` with its data in `directory` and
 * `appendfsync` = "always" | "everysec" (AOF on, RDB snapshots off). Resolves
 * once it accepts connections (after loading any AOF), with the process, the
 * time that took, and `stop`/`kill`.
 */
export const startRedis = async ({ path, port, directory, appendfsync }) => {
  const started = performance.now();
  const child = spawn(
    path,
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      directory,
      "--appendonly",
      "yes",
      "--appendfsync",
      appendfsync,
      "--save",
      "",
      "--daemonize",
      "no",
      "--protected-mode",
      "yes",
      "--maxmemory-policy",
      "noeviction",
      "--loglevel",
      "notice",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  running.add(child);
  child.once("exit", () => running.delete(child));
  let log = "";
  const ready = new Promise((resolveReady, reject) => {
    const onData = (chunk) => {
      log += chunk.toString();
      if (log.includes("Ready to accept connections")) resolveReady();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code, signal) =>
      reject(new Error(`redis-server exited (${code ?? signal}) before it was ready:\n${log}`)),
    );
  });
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`redis-server not ready after ${readyTimeoutMs} ms:\n${log}`)),
      readyTimeoutMs,
    );
  });
  try {
    await Promise.race([ready, timeout]);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const readySeconds = (performance.now() - started) / 1000;
  const exited = new Promise((resolveExit) => child.once("exit", resolveExit));
  return {
    port,
    child,
    readySeconds,
    log: () => log,
    /** SIGKILL: no shutdown work, like a crash of the process. */
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    /** SIGTERM: Redis's own shutdown. */
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
};
