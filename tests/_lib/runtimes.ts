// Where runtimes_test.ts finds Node 22, Node 24 and Bun: the cache prefixes .ci/run installs
// them into (`npm i --prefix <cache>/node22 node@22`, and so on), under $AGENTMEM_RUNTIMES or
// ~/.cache/agentmem. Deno-side helper.

/** A JavaScript runtime the npm package is tested on. */
export interface RuntimeSpec {
  /** The name in test names and in the cache: `node22`, `node24`, `bun`. */
  readonly name: string;
  /** The npm package and version range `.ci/run` installs it from. */
  readonly npm: string;
  /** The executable in `<prefix>/node_modules/.bin/`. */
  readonly exe: string;
  /** What `<exe> --version` must print. */
  readonly version: RegExp;
}

/** A runtime found on this machine. */
export interface Runtime extends RuntimeSpec {
  readonly bin: string;
  /** What `--version` printed. */
  readonly printed: string;
}

/** The runtimes the package is tested on, besides Deno. */
export const RUNTIMES: readonly RuntimeSpec[] = [
  { name: "node22", npm: "node@22", exe: "node", version: /^v22\.\d+\.\d+$/ },
  { name: "node24", npm: "node@24", exe: "node", version: /^v24\.\d+\.\d+$/ },
  { name: "bun", npm: "bun@1.4.4", exe: "bun", version: /^1\.4\.4$/ },
];

/** The directory holding one npm prefix per runtime. */
export function runtimeCache(): string {
  return Deno.env.get("AGENTMEM_RUNTIMES") ??
    `${Deno.env.get("HOME") ?? "/root"}/.cache/agentmem`;
}

/** The install command for a runtime, for messages. */
export function installHint(spec: RuntimeSpec): string {
  return `npm i --prefix ${runtimeCache()}/${spec.name} ${spec.npm} (or bash .ci/run)`;
}

/** The runtime in its cache prefix, or `undefined` when it is absent or another version. */
export function findRuntime(spec: RuntimeSpec): Runtime | undefined {
  const bin = `${runtimeCache()}/${spec.name}/node_modules/.bin/${spec.exe}`;
  try {
    const out = new Deno.Command(bin, { args: ["--version"], stdout: "piped", stderr: "null" })
      .outputSync();
    const printed = new TextDecoder().decode(out.stdout).trim();
    return out.success && spec.version.test(printed) ? { ...spec, bin, printed } : undefined;
  } catch {
    return undefined;
  }
}
