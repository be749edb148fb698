/**
 * The operator CLI: inspect, edit, check, export and import a memory store from a shell, see and
 * undo what a run wrote, and create a jetstream bucket. Install it once, then run `agentmem`:
 *
 * ```sh
 * deno install -g -A -n agentmem jsr:@agentmem/memory/cli   # Deno
 * npm install -g @agentmem/memory                           # Node (or: npx @agentmem/memory ...)
 * agentmem list --dir ./.agentmem
 * agentmem log --tainted --servers nats://127.0.0.1:4222 --bucket agentmem
 * ```
 *
 * `agentmem --help` lists every command; `agentmem <command> --help` gives that command's usage,
 * options and an example. From code, `main(args)` runs it and resolves the exit status.
 *
 * @module
 */

import { main } from "./cli/main.ts";

export { main };

if (import.meta.main) Deno.exit(await main(Deno.args));
