// A nats-server cluster whose every node runs in its own network namespace, so that the nemesis
// can cut, slow, pause and kill one node without touching the others. Runs from the hub
// namespace, where the node addresses are reachable.

import { inNamespace, nodeAddr } from "./netns.ts";
import { isStopped } from "../_lib/nats_server.ts";

/** The client port every node listens on (at its own address). */
export const CLIENT_PORT = 4222;
const ROUTE_PORT = 6222;

/** One node: a nats-server process in a namespace, with a store dir kept across restarts. */
export interface ClusterNode {
  readonly index: number;
  /** The server name, as JetStream reports a stream leader. */
  readonly name: string;
  readonly ns: string;
  readonly url: string;
  /** Whether the process runs (it may be paused). */
  readonly running: boolean;
  /** SIGKILL: a crash. The store dir is kept. */
  kill(): Promise<void>;
  /** Starts the process again on the same config and store dir. */
  restart(): Promise<void>;
  /** SIGSTOP, resolving once every thread is stopped. */
  pause(): Promise<void>;
  /** SIGCONT. */
  resume(): void;
}

/** A running cluster. */
export interface NsCluster {
  readonly nodes: readonly ClusterNode[];
  readonly urls: string[];
  /** Stops every node (SIGCONT, then SIGKILL: the store is thrown away). */
  stop(): Promise<void>;
  /** Kills every node, empties the stores and starts them again: a new cluster. */
  reset(): Promise<void>;
}

/** How to start the cluster. */
export interface NsClusterOptions {
  readonly bin: string;
  readonly namespaces: readonly string[];
  /** A directory for configs, logs and stores. */
  readonly dir: string;
  /** Adds `sync_interval: always` (nats-server 2.10+): fsync every write. */
  readonly syncAlways?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts one node per namespace and waits until each accepts clients. */
export async function startNsCluster(opts: NsClusterOptions): Promise<NsCluster> {
  const routes = opts.namespaces.map((_, i) => `"nats://${nodeAddr(i)}:${ROUTE_PORT}"`).join(", ");
  const nodes = opts.namespaces.map((ns, i) => makeNode(opts, ns, i, routes));
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stopForGood()));
  };
  try {
    for (const n of nodes) await n.restart();
  } catch (e) {
    await stop();
    throw e;
  }
  const reset = async () => {
    await stop();
    for (const n of nodes) {
      await Deno.remove(`${opts.dir}/${n.name}-store`, { recursive: true }).catch(() => {});
    }
    // One at a time: nodes that bootstrap at the same instant sometimes leave one out.
    for (const n of nodes) await n.restart();
  };
  return { nodes, urls: nodes.map((n) => n.url), stop, reset };
}

function makeNode(
  opts: NsClusterOptions,
  ns: string,
  index: number,
  routes: string,
): ClusterNode & { stopForGood(): Promise<void> } {
  const name = `n${index + 1}`;
  const addr = nodeAddr(index);
  const conf = `${opts.dir}/${name}.conf`;
  Deno.writeTextFileSync(
    conf,
    [
      `server_name: "${name}"`,
      `listen: "${addr}:${CLIENT_PORT}"`,
      `jetstream { store_dir: "${opts.dir}/${name}-store"${
        opts.syncAlways ? ", sync_interval: always" : ""
      } }`,
      `cluster { name: "nemesis", listen: "${addr}:${ROUTE_PORT}", routes: [${routes}] }`,
    ].join("\n"),
  );
  let child: Deno.ChildProcess | undefined;
  let paused = false;
  const kill = async () => {
    const c = child;
    if (c === undefined) return;
    child = undefined;
    try {
      c.kill("SIGKILL");
    } catch {
      // gone
    }
    paused = false;
    await c.status;
  };
  return {
    index,
    name,
    ns,
    url: `nats://${addr}:${CLIENT_PORT}`,
    get running() {
      return child !== undefined;
    },
    kill,
    restart: async () => {
      if (child !== undefined) return;
      // `ip netns exec` execs the server, so the child's pid is the server's.
      const [cmd, args] = inNamespace(ns, opts.bin, ["-c", conf, "-l", `${opts.dir}/${name}.log`]);
      child = new Deno.Command(cmd, { args, stdin: "null", stdout: "null", stderr: "null" })
        .spawn();
      await waitForClients(addr, child);
    },
    pause: async () => {
      if (child === undefined || paused) return;
      child.kill("SIGSTOP");
      paused = true;
      for (let i = 0; i < 200 && !(await isStopped(child.pid)); i++) await sleep(10);
    },
    resume: () => {
      if (child === undefined || !paused) return;
      child.kill("SIGCONT");
      paused = false;
    },
    stopForGood: async () => {
      if (child !== undefined && paused) child.kill("SIGCONT");
      await kill();
    },
  };
}

async function waitForClients(addr: string, child: Deno.ChildProcess): Promise<void> {
  let exited = false;
  child.status.then(() => exited = true);
  for (let i = 0; i < 300; i++) {
    if (exited) throw new Error(`nats-server at ${addr} exited at start`);
    try {
      const conn = await Deno.connect({ hostname: addr, port: CLIENT_PORT });
      conn.close();
      return;
    } catch {
      await sleep(50);
    }
  }
  throw new Error(`nats-server at ${addr} did not accept clients within 15 s`);
}
