/**
 * The `tay` executable: binds the CLI to this process — standard streams,
 * SIGINT, the Node disk — runs it, and sets the exit status.
 *
 * SIGINT follows the command's `InterruptPolicy`: the demo stops
 * gracefully; a writing command finishes first (it takes milliseconds, and a
 * cut write would leave a torn tail) and the process then exits 130; a
 * read-only command exits 130 at once. A second SIGINT always exits 130 at
 * once.
 */
import * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as Cli from "./Cli.js";
import { NodeDisk } from "@tay/shell-node";
import { writeTo } from "./streamWrite.js";
import { Terminal, type TerminalService } from "./Terminal.js";

const argv = process.argv.slice(2);
const policy = Cli.interruptPolicy(argv);
const signal = Effect.runSync(Deferred.make<void>());
let signals = 0;

const onSignal = () => {
  signals += 1;
  if (policy === "immediate" || signals > 1) process.exit(Cli.exitCodes.interrupted);
  Effect.runSync(Deferred.succeed(signal, undefined));
};
process.on("SIGINT", onSignal);
// A service manager stops `tay serve` with SIGTERM: it closes as on SIGINT.
if (policy === "graceful") process.on("SIGTERM", onSignal);

// `tay dump DIR | head` closes the pipe early: that is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(Cli.exitCodes.ok);
});

const terminal: TerminalService = {
  out: writeTo(process.stdout),
  err: writeTo(process.stderr),
  isTerminal: process.stdout.isTTY === true,
  interrupted: Deferred.await(signal),
  wasInterrupted: Deferred.isDone(signal),
};

const program = Cli.run(argv).pipe(
  Effect.provide(Layer.merge(NodeDisk.layer, Layer.succeed(Terminal, terminal))),
);

Effect.runPromise(program).then(
  (status) => {
    process.exitCode =
      policy === "deferred" && signals > 0 && status === Cli.exitCodes.ok
        ? Cli.exitCodes.interrupted
        : status;
  },
  (cause: unknown) => {
    // Cli.run never fails; this is a last guard against a stack trace.
    const message = cause instanceof Error ? cause.message : String(cause);
    process.stderr.write(`tay: Defect: ${message.replace(/\s*[\r\n]+\s*/g, " ")}\n`);
    process.exitCode = Cli.exitCodes.failure;
  },
);
