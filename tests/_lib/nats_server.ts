// Private nats-server processes for tests and the benchmark: JetStream on a loopback port with a
// temp storage directory, stopped by process id. Never a shared server.

import type { NatsConnection } from "@nats-io/nats-core";
import { natsServerBinary } from "./binaries.ts";
import { needs } from "./needs.ts";

export { natsServerBinary };

/**
 * `Deno.test` options for a test that needs nats-server. Without the binary: under `CI=true` the
 * test runs and fails (never a skip); elsewhere it is skipped with a loud warning.
 */
export function needsNats(): { ignore: boolean } {
  return needs("the jetstream tests", "nats-server");
}

function requireBinary(): string {
  const bin = natsServerBinary();
  if (bin === undefined) {
    throw new Error(
      "nats-server is not installed; install it with: apt-get install -y nats-server",
    );
  }
  return bin;
}

/** A free loopback TCP port (bound, then released). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

export interface NatsServerOptions {
  /** The client port; default: one the server picks (`-p -1`), kept across restarts. */
  readonly port?: number;
  /** JetStream storage directory; default: a fresh temp directory, removed by `stop()`. */
  readonly storeDir?: string;
  /** Extra configuration text appended to the generated config file. */
  readonly config?: string;
  /** The server name (needed in a cluster). */
  readonly name?: string;
  /** Whether JetStream is enabled (default `true`). */
  readonly jetstream?: boolean;
  /** The nats-server binary (default: `natsServerBinary()`). */
  readonly binary?: string | undefined;
}

/** A running private nats-server. */
export interface NatsServer extends AsyncDisposable {
  /** The client port. */
  readonly port: number;
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  /** The server's process id while it runs. */
  readonly pid: number;
  /** The server name (`server_name`), as JetStream reports a stream's leader. */
  readonly name: string | undefined;
  /** The JetStream storage directory. */
  readonly storeDir: string;
  /** Sends `signal` to the process and waits for it to exit (SIGKILL simulates a crash). */
  kill(signal?: Deno.Signal): Promise<void>;
  /** Starts the server again on the same port and storage directory after `kill()`. */
  restart(): Promise<void>;
  /**
   * Freezes the process (SIGSTOP): it keeps its sockets but answers nothing, like a hung server.
   * Resolves once the kernel reports it stopped.
   */
  pause(): Promise<void>;
  /** Lets a paused process run again (SIGCONT). */
  resume(): void;
  /** Stops the server (SIGTERM, then SIGKILL) and removes a temp storage directory. */
  stop(): Promise<void>;
}

/** Starts a private nats-server with JetStream on loopback and waits until it accepts clients. */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServer> {
  const bin = options.binary ?? requireBinary();
  const work = await Deno.makeTempDir({ prefix: "agentmem-nats-" });
  const storeDir = options.storeDir ?? `${work}/js`;
  let port = options.port ?? -1;
  let child: Deno.ChildProcess | undefined;
  let pid = 0;
  let paused = false;

  const launch = async () => {
    const conf = [
      `listen: "127.0.0.1:${port}"`,
      `ports_file_dir: "${work}"`,
      options.name ? `server_name: "${options.name}"` : "",
      options.jetstream === false ? "" : `jetstream { store_dir: "${storeDir}" }`,
      options.config ?? "",
    ].join("\n");
    await Deno.writeTextFile(`${work}/nats.conf`, conf);
    child = new Deno.Command(bin, {
      args: ["-c", `${work}/nats.conf`, "-l", `${work}/nats.log`],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    pid = child.pid;
    port = await waitForPort(work, pid, child);
  };
  await launch();

  const kill = async (signal: Deno.Signal = "SIGKILL") => {
    if (child === undefined) return;
    const c = child;
    child = undefined;
    try {
      c.kill(signal);
      // A stopped process only acts on a signal other than SIGKILL once it runs again.
      if (paused && signal !== "SIGKILL") c.kill("SIGCONT");
    } catch {
      // already gone
    }
    paused = false;
    await c.status;
    await Deno.remove(`${work}/nats-server_${pid}.ports`).catch(() => {});
  };

  const server: NatsServer = {
    get port() {
      return port;
    },
    get url() {
      return `nats://127.0.0.1:${port}`;
    },
    get pid() {
      return pid;
    },
    name: options.name,
    storeDir,
    kill,
    restart: async () => {
      if (child !== undefined) throw new Error("nats-server is still running");
      await launch();
    },
    pause: async () => {
      if (child === undefined) throw new Error("nats-server is not running");
      child.kill("SIGSTOP");
      paused = true;
      // The signal is delivered asynchronously; a request sent before every thread stopped could
      // still be answered.
      for (let i = 0; i < 500 && !(await isStopped(pid)); i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    resume: () => {
      if (child === undefined || !paused) return;
      child.kill("SIGCONT");
      paused = false;
    },
    stop: async () => {
      if (child !== undefined) {
        const c = child;
        const timer = setTimeout(() => {
          try {
            c.kill("SIGKILL");
          } catch {
            // gone
          }
        }, 5_000);
        await kill("SIGTERM");
        clearTimeout(timer);
      }
      await Deno.remove(work, { recursive: true }).catch(() => {});
    },
    [Symbol.asyncDispose]() {
      return this.stop();
    },
  };
  return server;
}

/** Whether every thread of `pid` is stopped (state "T" in /proc; Linux only, else assumed). */
export async function isStopped(pid: number): Promise<boolean> {
  try {
    for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
      const stat = await Deno.readTextFile(`/proc/${pid}/task/${task.name}/stat`);
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (state !== "T" && state !== "t") return false;
    }
    return true;
  } catch {
    return true;
  }
}

// The server writes `<exe>_<pid>.ports` once it listens; read the client port from it.
async function waitForPort(dir: string, pid: number, child: Deno.ChildProcess): Promise<number> {
  let exited = false;
  child.status.then(() => exited = true);
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (exited) {
      const log = await Deno.readTextFile(`${dir}/nats.log`).catch(() => "");
      throw new Error(`nats-server exited at start:\n${log.slice(-2000)}`);
    }
    try {
      const ports = JSON.parse(await Deno.readTextFile(`${dir}/nats-server_${pid}.ports`));
      const url = String(ports.nats?.[0] ?? "");
      const port = Number(new URL(url.replace(/^nats:/, "http:")).port);
      if (port > 0) return port;
    } catch {
      // not written yet
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  child.kill("SIGKILL");
  throw new Error("nats-server did not start within 15 s");
}

/** A running 3-node (or n-node) JetStream cluster on loopback. */
export interface NatsCluster extends AsyncDisposable {
  readonly servers: readonly NatsServer[];
  /** Every node's client URL, for a client that fails over. */
  readonly urls: string[];
  stop(): Promise<void>;
}

/** Starts an n-node JetStream cluster on loopback (default 3 nodes). */
export async function startNatsCluster(size = 3, binary?: string): Promise<NatsCluster> {
  // On a loaded machine a node now and then never joins the JetStream group, and every replicated
  // stream is then refused ("no suitable peers for placement"): start such a cluster over.
  for (let attempt = 1;; attempt++) {
    const cluster = await startNodes(size, binary);
    if (size === 1 || await placesReplicas(cluster, size)) return cluster;
    await cluster.stop();
    if (attempt >= 3) throw new Error(`a ${size}-node cluster never placed an R${size} stream`);
  }
}

// Whether the cluster accepts a stream with `replicas` replicas within 30 s (the probe is removed).
async function placesReplicas(cluster: NatsCluster, replicas: number): Promise<boolean> {
  const nc = await natsConnect(cluster.urls);
  try {
    const { jetstreamManager } = await import("@nats-io/jetstream");
    // The manager asks for the account first, which fails until JetStream has a meta leader.
    await retryUntil(
      async () => {
        const jsm = await jetstreamManager(nc);
        await jsm.streams.add({
          name: "agentmem_probe",
          subjects: ["agentmem.probe"],
          num_replicas: replicas,
        });
        await jsm.streams.delete("agentmem_probe");
      },
      30_000,
      250,
    );
    return true;
  } catch {
    return false;
  } finally {
    await nc.close().catch(() => {});
  }
}

async function startNodes(size: number, binary: string | undefined): Promise<NatsCluster> {
  // The ports are picked free but only taken when the servers start, so another process can take
  // one first; then the whole cluster starts again on new ports.
  let servers: NatsServer[] | undefined;
  for (let attempt = 1; servers === undefined; attempt++) {
    const clusterPorts = Array.from({ length: size }, () => freePort());
    const clientPorts = Array.from({ length: size }, () => freePort());
    const routes = clusterPorts.map((p) => `"nats://127.0.0.1:${p}"`).join(", ");
    const started = await Promise.allSettled(
      clusterPorts.map((clusterPort, i) =>
        startNatsServer({
          port: clientPorts[i] as number,
          name: `n${i + 1}`,
          binary,
          config:
            `cluster { name: "agentmem-test", listen: "127.0.0.1:${clusterPort}", routes: [${routes}] }`,
        })
      ),
    );
    const failed = started.find((r) => r.status === "rejected");
    if (failed === undefined) {
      servers = started.map((r) => (r as PromiseFulfilledResult<NatsServer>).value);
      break;
    }
    await Promise.all(started.map((r) => r.status === "fulfilled" ? r.value.stop() : undefined));
    if (attempt >= 3) throw failed.reason;
  }
  const cluster: NatsCluster = {
    servers,
    get urls() {
      return servers.map((s) => s.url);
    },
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()));
    },
    [Symbol.asyncDispose]() {
      return this.stop();
    },
  };
  return cluster;
}

/**
 * Connects a client the way a long-running host should: it reconnects forever (every 250 ms), so
 * a server restart does not close it.
 */
export async function natsConnect(
  servers: string | readonly string[],
  name = "agentmem-test",
): Promise<NatsConnection> {
  const { connect } = await import("@nats-io/transport-node");
  return await connect({
    servers: typeof servers === "string" ? [servers] : [...servers],
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
  });
}

/**
 * Retries `fn` until it resolves or `ms` pass, then rethrows its last failure. For waiting on
 * things with no notification, such as a new cluster electing its JetStream leaders.
 */
export async function retryUntil<T>(fn: () => Promise<T>, ms = 30_000, pauseMs = 200): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
}
