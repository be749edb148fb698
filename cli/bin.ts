// The npm package's `agentmem` bin: the operator CLI on Node (and Bun). The CLI does its I/O
// through node: modules, so the same code serves `deno run jsr:@agentmem/memory/cli` (cli.ts)
// and `npx agentmem`; this entry only takes the arguments and the exit status from node:process.

import process from "node:process";
import { main } from "./main.ts";

process.exitCode = await main(process.argv.slice(2));
