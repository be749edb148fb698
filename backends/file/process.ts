// Which process wrote a temp file or holds a lock, and whether it is still alive, so that what a
// killed process left behind is cleaned up without ever racing a live one. A token is
// `<pid>-<start>-<where>`; a judge decides only where its own `<where>` is the token's, and
// "unknown" is never taken for "dead" (docs/design/file-locks.md).

import { createHash } from "node:crypto";
import { errorKind } from "../../store/text.ts";
import {
  deviceOf,
  listNames,
  readLinkOrUndefined,
  readSmallText,
  readTextIfExists,
  statOf,
} from "./fs.ts";

/** What is known of a holder: alive, dead, or not knowable from here. */
export type Liveness = "alive" | "dead" | "unknown";

/** A token's parts. */
export interface Token {
  readonly pid: number;
  readonly start: string;
  readonly where: string;
}

const TOKEN = /^(\d{1,10})-(\d{1,20})-([0-9a-f]{8})$/;
/** The token of a process that cannot name itself (no readable /proc): never judged. */
const NOBODY = "0-0-00000000";

interface Here {
  readonly token: string;
  readonly pid: number;
  readonly start: string;
  readonly where: string;
  /** /proc hides processes (hidepid): a pid it does not show may still be alive. */
  readonly hides: boolean;
}

let here: Here | undefined;

function local(): Here {
  if (here !== undefined) return here;
  const pid = Number(readLinkOrUndefined("/proc/self"));
  const start = Number.isSafeInteger(pid) && pid > 0 ? startTime(pid) : undefined;
  const boot = readSmallText("/proc/sys/kernel/random/boot_id")?.trim();
  const pidNs = readLinkOrUndefined("/proc/self/ns/pid");
  // Time namespaces shift the start times /proc shows; kernels without them have no link.
  const timeNs = readLinkOrUndefined("/proc/self/ns/time") ?? "";
  const proc = deviceOf("/proc");
  if (typeof start !== "string" || start === "0" || !boot || !pidNs || proc === undefined) {
    return (here = { token: NOBODY, pid: 0, start: "0", where: "", hides: true });
  }
  const where = createHash("sha256").update(`${boot}\n${pidNs}\n${timeNs}\n${proc}`).digest("hex")
    .slice(0, 8);
  return (here = { token: `${pid}-${start}-${where}`, pid, start, where, hides: hidesPids() });
}

// Whether /proc is mounted with hidepid (other users' processes invisible), from mountinfo.
function hidesPids(): boolean {
  const info = readSmallText("/proc/self/mountinfo");
  if (info === undefined) return true;
  for (const line of info.split("\n")) {
    const [mount, rest] = line.split(" - ", 2);
    if (mount?.split(" ")[4] !== "/proc" || rest === undefined) continue;
    const options = rest.split(" ")[2] ?? "";
    return /(^|,)hidepid=(?!0(,|$)|off(,|$))/.test(options);
  }
  return false;
}

// Field 22 of /proc/<pid>/stat: the process's start time in clock ticks since boot; `null` when
// there is no such process, `undefined` when /proc does not say (unreadable).
function startTime(pid: number): string | null | undefined {
  const stat = readTextIfExists(`/proc/${pid}/stat`);
  if (stat === null || stat === undefined) return stat;
  // The command name (field 2) is in parentheses and may hold spaces; count after its close.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const start = fields[19];
  return start !== undefined && /^\d+$/.test(start) ? start : undefined;
}

/** This process's token (`0-0-00000000` when /proc cannot name it: then it is never judged). */
export function selfToken(): string {
  return local().token;
}

/** A token's parts, or `undefined` when it is not one. */
export function parseToken(token: string): Token | undefined {
  const m = TOKEN.exec(token);
  if (m === null) return undefined;
  const [, pid, start, where] = m as unknown as [string, string, string, string];
  return { pid: Number(pid), start, where };
}

/** Whether the process named by `token` is alive, as far as this process can tell. */
export function liveness(token: string): Liveness {
  const t = parseToken(token);
  const h = local();
  if (t === undefined || h.where === "" || t.where !== h.where || t.start === "0") return "unknown";
  if (t.pid === h.pid) return t.start === h.start ? "alive" : "dead";
  const now = startTime(t.pid);
  if (now === null) return h.hides ? "unknown" : "dead";
  if (now === undefined) return "unknown";
  return now === t.start ? "alive" : "dead";
}

/**
 * Whether the process named by `token` (judged alive) has the file `file` (device and inode) open, as
 * /proc shows its descriptors; `undefined` when they cannot be read. Only descriptors whose link
 * names `hint` (a part of the name the file was opened by) are looked at, so a descriptor on a
 * hung remote filesystem is never touched.
 */
export function holdsOpen(
  token: string,
  o: { readonly file: { readonly dev: number; readonly ino: number }; readonly hint: string },
): boolean | undefined {
  const { file, hint } = o;
  const t = parseToken(token);
  if (t === undefined || t.where !== local().where || local().where === "") return undefined;
  const dir = `/proc/${t.pid === local().pid ? "self" : t.pid}/fd`;
  let names;
  try {
    names = listNames(dir);
  } catch (e) {
    // Gone since it was judged alive: it holds nothing.
    return errorKind(e) === "ENOENT" && !local().hides ? false : undefined;
  }
  for (const { name } of names) {
    if (!readLinkOrUndefined(`${dir}/${name}`)?.includes(hint)) continue;
    const st = statOf(`${dir}/${name}`);
    if (st !== undefined && st.dev === file.dev && st.ino === file.ino) return true;
  }
  // A process that exited between the two reads has no descriptors either.
  return false;
}
