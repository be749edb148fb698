// The benchmark's command-line flags.

import { parseArgs } from "node:util";
import { MAX_ENTRIES } from "../mod.ts";
import type { Backend, Op } from "./_protocol.ts";

// The parts of the benchmark.
const SUITES = ["main", "lists", "micro", "peers"] as const;
type Suite = typeof SUITES[number];

/** A keyspace: shared by every process, or one private set of keys per process. */
export type Keyspace = "contended" | "disjoint";

/** The parsed flags. `mix` is the phases in order, each weight splitting `ops` between them. */
export type Config = Exclude<ReturnType<typeof parseConfig>, "help">;

/** The usage text `--help` prints (bench/usage.txt); its flags are the ones parsed. */
export const USAGE = Deno.readTextFileSync(new URL("usage.txt", import.meta.url))
  .replace("{MAX_ENTRIES}", String(MAX_ENTRIES));

const OPS: readonly Op[] = ["create", "update", "read", "delete", "counter"];
// The flags, read off the usage text: `--name VALUE` takes a value, `--name` is a switch.
const FLAGS = [...USAGE.matchAll(/^ {2}--([a-z-]+)( [A-Z])?/gm)];
const OPTIONS = Object.fromEntries(
  FLAGS.map(([, name, value]) => [name, { type: value ? "string" as const : "boolean" as const }]),
);

function fail(message: string): never {
  throw new Error(message);
}

/** Parses `args`; throws an `Error` whose message is fit for the user. */
export function parseConfig(args: string[]) {
  const parsed = parseArgs({ args, strict: true, allowPositionals: false, options: OPTIONS });
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help === true) return "help";
  const text = (name: string) => values[name] as string | undefined;
  const list = (name: string, fallback: string) =>
    (text(name) ?? fallback).split(",").map((s) => s.trim());
  const quick = values.quick === true;
  const int = (name: string, fallback: number, min = 1, given = text(name)) => {
    const n = Number(given ?? fallback);
    if (!Number.isSafeInteger(n) || n < min) {
      fail(`Invalid --${name} "${given}": expected an integer of at least ${min}`);
    }
    return n;
  };
  // One of two, or "both".
  const either = (name: string, pair: string[]) => {
    const value = choice(name, text(name) ?? "both", [...pair, "both"]);
    return value === "both" ? pair : [value];
  };
  const mixText = text("mix") ?? "create,update=2,read=2,counter=1,delete";
  const config = {
    processes: int("processes", quick ? 2 : 4),
    ops: int("ops", quick ? 30 : 1500),
    keys: int("keys", quick ? 8 : 64),
    keyspaces: either("keyspace", ["contended", "disjoint"]) as Keyspace[],
    valueSize: int("value-size", 1024, 0),
    mix: parseMix(mixText),
    mixText,
    backends: either("backend", ["file", "jetstream"]) as Backend[],
    trials: int("trials", quick ? 1 : 5),
    suites: list("suites", SUITES.join(",")).map((s) => choice("suites", s, SUITES) as Suite),
    listEntries: int("list-entries", quick ? 128 : MAX_ENTRIES, 0),
    listValueSizes: list("list-value-sizes", "1024,65536").map((s) =>
      int("list-value-sizes", 0, 0, s)
    ),
    listReps: int("list-reps", quick ? 1 : 5),
    warmup: int("warmup", quick ? 3 : 200, 0),
    servers: text("servers")?.split(",").map((s) => s.trim()).filter((s) => s !== ""),
    dir: text("dir"),
    json: text("json"),
    writeBenchMd: values["write-bench-md"] === true,
    quick,
    strict: values.strict === true,
  };
  // The store's capacity bounds the keys a run may create.
  for (const keyspace of config.keyspaces) {
    const total = keyspace === "contended" ? config.keys : config.keys * config.processes;
    const over =
      `${total} in the ${keyspace} keyspace (plus the counter) exceeds the store's capacity of ${MAX_ENTRIES}`;
    if (total + 1 > MAX_ENTRIES) fail(`Too many keys: ${over}; lower --keys or --processes`);
  }
  if (config.listEntries > MAX_ENTRIES) fail(`Invalid --list-entries: at most ${MAX_ENTRIES}`);
  return config;
}

function choice(name: string, value: string, allowed: readonly string[]): string {
  if (allowed.includes(value)) return value;
  return fail(`Invalid --${name} "${value}": expected one of ${allowed.join(", ")}`);
}

/** Parses `create,update=2,read=2,counter=1,delete`. */
export function parseMix(text: string): { op: Op; weight: number }[] {
  const mix: { op: Op; weight: number }[] = [];
  const bad = (why: string) => fail(`Invalid --mix "${text}": ${why}`);
  for (const part of text.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
    const [name, weightText] = part.split("=", 2) as [Op, string | undefined];
    if (!OPS.includes(name)) bad(`unknown operation "${name}" (${OPS.join(", ")})`);
    const weight = weightText === undefined ? 1 : Number(weightText);
    if (!Number.isFinite(weight) || weight < 0) bad(`weight of "${name}" is not a number >= 0`);
    if (mix.some((m) => m.op === name)) bad(`"${name}" appears twice`);
    mix.push({ op: name, weight });
  }
  return mix.length > 0 ? mix : bad("no operation");
}

/** Operations per process of each weighted phase. */
export function opsPerPhase(config: Config, op: Op): number {
  const weighted = config.mix.filter((m) => m.op !== "create" && m.op !== "delete");
  const total = weighted.reduce((sum, m) => sum + m.weight, 0);
  const mine = weighted.find((m) => m.op === op);
  if (mine === undefined || total === 0) return 0;
  return Math.max(1, Math.round((config.ops * mine.weight) / total));
}
