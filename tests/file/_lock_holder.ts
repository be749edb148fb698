// A helper process for lock_test.ts (not part of the package): runs on Deno, Node (22.18 and
// later strip the types) and Bun from source, so that each runtime's locks are held and judged by
// the others.
//
//   _lock_holder.ts hold <lock path> <key>   takes the lock, prints {"t":"locked",...}, holds it
//   _lock_holder.ts judge <lock path>        prints {"t":"state",...}: inspect() of the lock
//   _lock_holder.ts token                    prints {"t":"token",...}: this process's token, exits

import process from "node:process";
import { acquire, inspect, selfToken } from "../../backends/file/testing.ts";

const [mode, path = "", key = "k"] = process.argv.slice(2);
const say = (r: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(r)}\n`);

if (mode === "hold") {
  const lock = await acquire(path, { key });
  say({ t: "locked", content: lock.content, token: selfToken() });
  setInterval(() => {}, 1 << 30); // held until this process is killed
} else if (mode === "token") {
  say({ t: "token", token: selfToken() });
} else if (mode === "judge") {
  say({ t: "state", ...inspect(path) });
} else {
  throw new Error(`usage: _lock_holder.ts hold|judge <lock path> [key] | token`);
}
