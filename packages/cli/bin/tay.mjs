#!/usr/bin/env node
// The `tay` executable: the compiled entry (run `pnpm build` first).
import "../dist/main.js";
