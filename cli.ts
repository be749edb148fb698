/**
 * The operator CLI: inspect, edit, check, export and import a memory store from a shell, and
 * create a jetstream bucket.
 *
 * ```sh
 * deno run -A jsr:@agentmem/memory/cli list --dir ./.agentmem
 * deno run -A jsr:@agentmem/memory/cli export --servers nats://127.0.0.1:4222 --bucket agentmem > dump.jsonl
 * ```
 *
 * Run it with `--help` for every command and option.
 *
 * @module
 */

import { main } from "./cli/main.ts";

export { main };

if (import.meta.main) Deno.exit(await main(Deno.args));
