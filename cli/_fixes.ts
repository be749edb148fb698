// Commands the CLI prints (a fix in an error, a pointer to `check`) carry the options that chose
// this run's store, so that each one runs as printed. Credentials are never repeated.

import type { Command } from "./_spec.ts";
import { optionsOf } from "./_spec.ts";

/** The options that say where the store is and how it opens, in the order they are printed. */
const CHOOSING = ["dir", "config", "servers", "creds", "bucket", "prefix", "no-history"];

// A printed option: ` --name=value` (the value ends at a space or at what ends a clause).
const PRINTED_OPTION = / --([a-z][a-z-]*)(?:=([^\s;,)"]+))?/y;

/** What this run was given that chose its store. */
export class Given {
  readonly #options: Readonly<Record<string, string | boolean>>;
  readonly #table: readonly Command[];
  /** Whether `--servers` held credentials, which printed commands leave out. */
  readonly #hadUserinfo: boolean;

  constructor(options: Readonly<Record<string, string | boolean>>, table: readonly Command[]) {
    const chosen: Record<string, string | boolean> = {};
    let userinfo = false;
    for (const name of CHOOSING) {
      const value = options[name];
      if (value === undefined) continue;
      if (name === "servers" && typeof value === "string") {
        const stripped = withoutUserinfo(value);
        userinfo = stripped !== value;
        chosen[name] = stripped;
      } else chosen[name] = value;
    }
    this.#options = chosen;
    this.#table = table;
    this.#hadUserinfo = userinfo;
  }

  /** `agentmem <words>` plus the choosing options `words`' command takes and does not give. */
  again(words: string): string {
    const command = this.#commandOf(words);
    const present = new Set<string>();
    for (const m of words.matchAll(/--([a-z][a-z-]*)/g)) present.add(m[1]!);
    return `agentmem ${words}${command === undefined ? "" : this.#extra(command, present)}`;
  }

  /**
   * `message` with every `agentmem <command> ...` it prints completed by `again`, and the option
   * `"history": false` named as this CLI spells it.
   */
  complete(message: string): string {
    let text = "";
    let at = 0;
    for (const m of message.matchAll(/agentmem ((?:[a-z]+ )*[a-z]+)/g)) {
      const command = this.#commandOf(m[1]!);
      if (command === undefined) continue;
      let end = m.index + "agentmem ".length + command.name.length;
      const present = new Set<string>();
      PRINTED_OPTION.lastIndex = end;
      for (let o = PRINTED_OPTION.exec(message); o !== null; o = PRINTED_OPTION.exec(message)) {
        present.add(o[1]!);
        end = PRINTED_OPTION.lastIndex;
      }
      text += message.slice(at, end) + this.#extra(command, present);
      at = end;
    }
    text += message.slice(at);
    return text.replace(
      /option "history": false(?! \()/g,
      'option "history": false (--no-history)',
    );
  }

  #extra(command: Command, present: ReadonlySet<string>): string {
    const takes = optionsOf(command);
    let extra = "";
    for (const [name, value] of Object.entries(this.#options)) {
      if (present.has(name) || !Object.hasOwn(takes, name)) continue;
      extra += value === true ? ` --${name}` : ` --${name}=${shellWord(String(value))}`;
    }
    if (this.#hadUserinfo && extra.includes("--servers=")) {
      extra += " (with the credentials of your --servers URL: set NATS_USER and NATS_PASSWORD)";
    }
    return extra;
  }

  // The longest command name `words` starts with.
  #commandOf(words: string): Command | undefined {
    let best: Command | undefined;
    for (const c of this.#table) {
      if (
        (words === c.name || words.startsWith(`${c.name} `)) &&
        c.name.length > (best?.name.length ?? 0)
      ) {
        best = c;
      }
    }
    return best;
  }
}

/** `value` as one word for a POSIX shell: as it is when that is safe, else single-quoted. */
export function shellWord(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

// The server list with any `user:password@` or `token@` taken out of each URL.
function withoutUserinfo(servers: string): string {
  return servers.split(",").map((entry) => entry.replace(/^([a-z]+:\/\/)?[^@/]*@/i, "$1")).join(
    ",",
  );
}
