// Network namespaces for the fault harness: one per node and a hub where the clients run, joined
// by veth pairs to a bridge in the hub. The addresses (10.77.0.0/24) exist only inside these
// namespaces, so nothing the harness does reaches the host's network. Needs root.

/** The hub's address on the bridge: where client processes connect from. */
export const HUB_ADDR = "10.77.0.1";

/** The address of node `i` (0-based) inside its namespace. */
export function nodeAddr(i: number): string {
  return `10.77.0.${11 + i}`;
}

// Names carry the creating process's id, so a later run can remove what a killed run left.
const NAME = /^am(\d+)([hn])(\d*)$/;

/** A hub namespace and one namespace per node, removed by `remove()`. */
export interface Namespaces {
  readonly hub: string;
  readonly nodes: readonly string[];
  /** Kills every process left in the namespaces, then deletes them. Idempotent. */
  remove(): Promise<void>;
}

/** Runs a command to completion; throws with its stderr when it fails. */
export async function sh(cmd: string, args: string[], input?: string): Promise<string> {
  const child = new Deno.Command(cmd, {
    args,
    stdin: input === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (input !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(input));
    await w.close();
  }
  const out = await child.output();
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr).trim();
    throw new Error(`${cmd} ${args.join(" ")} failed: ${err}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** The arguments that run `cmd` inside namespace `ns`. */
export function inNamespace(ns: string, cmd: string, args: string[]): [string, string[]] {
  return ["ip", ["netns", "exec", ns, cmd, ...args]];
}

async function listNamespaces(): Promise<string[]> {
  const out = await sh("ip", ["netns", "list"]);
  return out.split("\n").map((l) => l.split(" ")[0] ?? "").filter((n) => n !== "");
}

async function removeNamespace(ns: string): Promise<void> {
  // Deleting a namespace does not end its processes: kill them first (they are this harness's).
  const pids = await sh("ip", ["netns", "pids", ns]).catch(() => "");
  for (const pid of pids.split("\n").map(Number).filter((p) => p > 1 && p !== Deno.pid)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  await sh("ip", ["netns", "del", ns]).catch(() => {});
}

function alive(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

/** Removes namespaces a harness run left behind when it was killed (its process is gone). */
export async function removeLeftovers(): Promise<number> {
  let removed = 0;
  for (const ns of await listNamespaces()) {
    const m = NAME.exec(ns);
    if (m && !alive(Number(m[1]))) {
      await removeNamespace(ns);
      removed++;
    }
  }
  return removed;
}

/**
 * Creates a hub namespace with a bridge at `HUB_ADDR` and `size` node namespaces, each joined to
 * the bridge by a veth pair at `nodeAddr(i)`, with an empty nftables table `nemesis` whose input
 * and output chains the nemesis fills. On failure, removes whatever it made.
 */
export async function createNamespaces(size: number): Promise<Namespaces> {
  await removeLeftovers();
  const base = `am${Deno.pid}`;
  const hub = `${base}h`;
  const nodes = Array.from({ length: size }, (_, i) => `${base}n${i + 1}`);
  let removed = false;
  const made: string[] = [];
  const remove = async () => {
    if (removed) return;
    removed = true;
    for (const ns of [...made].reverse()) await removeNamespace(ns);
  };
  try {
    for (const ns of [hub, ...nodes]) {
      await sh("ip", ["netns", "add", ns]);
      made.push(ns);
      await sh("ip", ["-n", ns, "link", "set", "lo", "up"]);
    }
    await sh("ip", ["-n", hub, "link", "add", "br0", "type", "bridge"]);
    await sh("ip", ["-n", hub, "addr", "add", `${HUB_ADDR}/24`, "dev", "br0"]);
    await sh("ip", ["-n", hub, "link", "set", "br0", "up"]);
    for (const [i, ns] of nodes.entries()) {
      const v = `v${i + 1}`;
      await sh("ip", [
        "-n",
        hub,
        "link",
        "add",
        v,
        "type",
        "veth",
        "peer",
        "name",
        "eth0",
        "netns",
        ns,
      ]);
      await sh("ip", ["-n", hub, "link", "set", v, "master", "br0", "up"]);
      await sh("ip", ["-n", ns, "addr", "add", `${nodeAddr(i)}/24`, "dev", "eth0"]);
      await sh("ip", ["-n", ns, "link", "set", "eth0", "up"]);
      await sh(
        ...inNamespace(ns, "nft", ["-f", "-"]),
        [
          "add table inet nemesis",
          "add chain inet nemesis input { type filter hook input priority 0; policy accept; }",
          "add chain inet nemesis output { type filter hook output priority 0; policy accept; }",
          "",
        ].join("\n"),
      );
    }
  } catch (e) {
    await remove();
    throw e;
  }
  return { hub, nodes, remove };
}
