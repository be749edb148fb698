// Which process wrote a temp file or holds a lock, and whether that process is still alive, so
// that what a killed process left behind can be cleaned up without ever racing a live one.
//
// A holder is named by a token `<pid>-<start>-<boot>`: its process id, its start time in clock
// ticks since boot (so a reused pid is told apart), and a short hash of the boot id and the pid
// namespace (so a token from before a reboot, or from another container's pid namespace, is
// never judged by this one's process table). All of it comes from Linux's /proc; where /proc
// cannot be read (another OS, or a Deno permission not granted) a holder's liveness is unknown
// and callers fall back to age.

import { createHash } from "node:crypto";
import process from "node:process";
import { readLinkOrUndefined, readSmallText, readTextIfExists } from "./fs.ts";

/** What is known of a holder: alive, dead, or not knowable from here. */
export type Liveness = "alive" | "dead" | "unknown";

const TOKEN = /^(\d{1,10})-(\d{1,20})-([0-9a-f]{8})$/;

let self: string | undefined;
let selfStart: string | undefined;
let here: string | undefined;

// The boot id and pid namespace, hashed; "" when /proc cannot tell them.
function machine(): string {
  if (here !== undefined) return here;
  const boot = readSmallText("/proc/sys/kernel/random/boot_id")?.trim();
  const ns = readLinkOrUndefined("/proc/self/ns/pid");
  here = boot && ns ? createHash("sha256").update(`${boot}\n${ns}`).digest("hex").slice(0, 8) : "";
  return here;
}

// Field 22 of /proc/<pid>/stat: the process's start time in clock ticks since boot; `null` when
// there is no such process, `undefined` when /proc does not say (unreadable, hidden).
function startTime(pid: number | "self"): string | null | undefined {
  const stat = readTextIfExists(`/proc/${pid}/stat`);
  if (stat === null || stat === undefined) return stat;
  // The command name (field 2) is in parentheses and may hold spaces; count after its close.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const start = fields[19];
  return start !== undefined && /^\d+$/.test(start) ? start : undefined;
}

/** This process's token. */
export function selfToken(): string {
  if (self === undefined) {
    selfStart = startTime("self") ?? "0";
    self = `${process.pid}-${selfStart}-${machine() || "00000000"}`;
  }
  return self;
}

/** Whether the process named by `token` is alive, as far as this process can tell. */
export function liveness(token: string): Liveness {
  const m = TOKEN.exec(token);
  if (m === null) return "unknown";
  const [, pid, start, boot] = m as unknown as [string, string, string, string];
  const mine = machine();
  // From another boot (or pid namespace): unknowable here; a caller decides by age.
  if (mine === "" || boot !== mine || start === "0") return "unknown";
  selfToken();
  if (Number(pid) === process.pid) return start === selfStart ? "alive" : "dead";
  const now = startTime(Number(pid));
  if (now === undefined) return "unknown";
  return now === start ? "alive" : "dead";
}
