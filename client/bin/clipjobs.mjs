#!/usr/bin/env node
// The command line runs from the TypeScript source through tsx (a devDependency of the
// repository), so `npx clipjobs` works right after `npm ci` with no build step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli.ts");
process.exitCode = await main(process.argv.slice(2));
