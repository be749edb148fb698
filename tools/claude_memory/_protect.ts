// Protected memory files (`anthropicMemoryHandlers(store, { protect })`): keys the model may view
// but never create, edit, rename or delete. Every write the handlers make goes through a store
// that refuses them (so no command path can miss one), and the commands that move or delete many
// files check them all first, so a refused file never leaves half a command done.

import type { Store } from "../../store/types.ts";
import { writeView } from "../../store/build.ts";
import { ruleFor } from "../_key_rules.ts";
import { ruleText } from "../_refusals.ts";
import { CommandError } from "./_files.ts";
import { pathOf } from "./_paths.ts";

/** `store` with every write of a key `rules` name refused (`store` itself when there are none). */
export function protectedStore(store: Store, rules: readonly string[]): Store {
  if (rules.length === 0) return store;
  return writeView(store, (key, opts) => {
    if (typeof key === "string") refuseProtected(rules, [key]);
    return opts;
  });
}

/** Throws the refusal for the first of `keys` a rule names; nothing has been changed then. */
export function refuseProtected(rules: readonly string[], keys: readonly string[]): void {
  for (const key of keys) {
    const rule = ruleFor(rules, key);
    if (rule === undefined) continue;
    throw new CommandError(
      `Refused: ${pathOf(key)} is protected in this run (${ruleText(rule)}): it can be viewed, ` +
        "but not created, edited, renamed or deleted. Nothing was changed.",
      "protected",
    );
  }
}
