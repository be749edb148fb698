// A command of Claude's memory tool whose writes the store held for review (store option
// `review`): the model is told so in one honest sentence, never an error it would retry, and the
// handler never repeats a held write. Each command hears of its held writes through a view of
// the store made for it.

import type { Proposal, Store } from "../../store/types.ts";
import { writeView } from "../../store/build.ts";
import { heldCall } from "../../store/hold.ts";
import { HELD_TEXT } from "../_refusals.ts";

/** A view of `store` whose writes report, into `held`, the proposals they became. */
export function heldView(store: Store, held: Proposal[]): Store {
  return writeView(store, (_key, opts) => heldCall(opts ?? {}, (p) => held.push(p)));
}

/** What the model reads after a command whose writes were held. */
export function heldText(command: string, input: Record<string, unknown>): string {
  const path = typeof input.path === "string" ? input.path : undefined;
  const what = command === "rename"
    ? `The rename of ${String(input.old_path)} to ${String(input.new_path)}`
    : `The ${command} of ${path ?? "the file"}`;
  return `${what} ${HELD_TEXT.replace("do not write it again", "do not repeat the command")}`;
}
