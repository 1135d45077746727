// One side of the lock interoperability check of .ci/runtimes (driven by
// lock-interop.mjs): `hold` opens the store and prints "held PID" until its
// standard input ends; `try` opens it and must be refused with `Locked`
// naming the holder's pid (it prints "refused by PID", or "opened").
//
//   RUNTIME lock-role.mjs hold DATA_DIR
//   RUNTIME lock-role.mjs try DATA_DIR
import { EnginePromises } from "@tay/shell-node";

const [role, directory] = process.argv.slice(2);
if (role === "hold") {
  const tay = await EnginePromises.open(directory, { createIfMissing: true });
  console.log(`held ${process.pid}`);
  await new Promise((resolve) =>
    process.stdin
      .on("end", resolve)
      .on("data", () => {})
      .resume(),
  );
  await tay.close();
} else if (role === "try") {
  const outcome = await EnginePromises.open(directory, {}).then(
    async (tay) => {
      await tay.close();
      return "opened";
    },
    (error) => (error?._tag === "Locked" ? `refused by ${error.holder?.pid}` : `failed ${error}`),
  );
  console.log(outcome);
} else {
  console.error("usage: lock-role.mjs hold|try DATA_DIR");
  process.exit(2);
}
