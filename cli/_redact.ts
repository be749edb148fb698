// The erasure commands: `redact` removes one version's description and content from everything
// the store keeps; `purge` deletes a key and removes every version's content (and its held
// writes), for a right-to-erasure request. Both are the operator's, recorded under the actor
// "operator", with the reason given.

import { purgeKey, redactVersion, Scope } from "../mod.ts";
import { UsageError } from "./_args.ts";
import { out, plural, safeJson } from "./_output.ts";
import type { Command } from "./_spec.ts";

function operatorScope(): Scope {
  return new Scope({ actor: "operator" });
}

const REASON = {
  kind: "string",
  value: "<text>",
  help: "why, in a line of at most 200 characters, kept with the redaction",
  required: true,
} as const;

export const redactCommand: Command = {
  name: "redact",
  summary:
    "remove one version's description and content from everything the store keeps; its place, provenance and hash stay, and check still verifies it",
  about:
    "For a secret written by mistake. The memory's newest version cannot be redacted: update or delete the memory first. history and log show the version as redacted, with who, when and why.",
  args: [{ name: "key" }, { name: "revision" }],
  options: { reason: REASON },
  reach: "store",
  writes: "always",
  examples: ['agentmem redact user.name <revision> --reason "a secret" --dir ./.agentmem'],
  alias: ["erase", "scrub"],
  run: async (ctx) => {
    const [key, revision] = ctx.args as [string, string];
    const { store } = await ctx.open();
    const v = await redactVersion(store, key, revision, {
      reason: ctx.str("reason")!,
      scope: operatorScope(),
    });
    if (ctx.json) out(safeJson({ version: v }));
    else out(`redacted ${key} revision ${revision}: its description and content are gone`);
    return 0;
  },
};

export const purgeCommand: Command = {
  name: "purge",
  summary:
    "delete a memory and remove every version's content, and its writes held for review (right to erasure); needs --yes",
  args: [{ name: "key" }],
  options: {
    reason: REASON,
    yes: { kind: "boolean", help: "yes, remove it: there is no undo" },
  },
  reach: "store",
  writes: "always",
  examples: ['agentmem purge user.name --reason "erasure request" --yes --dir ./.agentmem'],
  run: async (ctx) => {
    const key = ctx.args[0]!;
    if (!ctx.flag("yes")) {
      throw new UsageError(
        `purge removes every version of ${key} and cannot be undone: add --yes to go ahead`,
      );
    }
    const { store } = await ctx.open();
    const r = await purgeKey(store, key, { reason: ctx.str("reason")!, scope: operatorScope() });
    if (ctx.json) out(safeJson(r));
    else {
      out(
        `purged ${key}: ${r.deleted ? "deleted, " : ""}${
          plural(r.redacted.length, "version", "versions")
        } redacted, ${plural(r.proposals, "held write", "held writes")} dropped`,
      );
    }
    return 0;
  },
};
