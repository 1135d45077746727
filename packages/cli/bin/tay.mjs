#!/usr/bin/env node
// The `tay` executable. A published package carries the whole command as
// one file (`bundle/tay.mjs`, made when the package is packed: docs/cli.md,
// "The published command is one file"), which loads in a fraction of the
// time of its ~500 modules; the workspace, which has no bundle, runs the
// compiled modules (run `pnpm build` first).
import { existsSync } from "node:fs";

const bundle = new URL("../bundle/tay.mjs", import.meta.url);
await import(existsSync(bundle) ? bundle.href : "../dist/main.js");
