// A command of many writes (a rename is a create and a delete per file, a folder delete a delete
// per file) that the run's budget (`new Scope({ budget })`) has no room for is refused before any
// file changes, so a budget never leaves a copy behind or half a folder deleted.

import { BudgetError } from "../../store/errors.ts";
import { budgetOf, type Scope } from "../../store/scope.ts";
import { budgetText } from "../_refusals.ts";
import { CommandError } from "./_files.ts";

/** Throws the budget refusal when the run cannot make `need` more writes and deletes. */
export function refuseOverBudget(
  scope: Scope | null,
  need: { readonly writes: number; readonly deletes: number },
): void {
  const counter = budgetOf(scope);
  if (counter === undefined) return;
  for (const kind of ["writes", "deletes"] as const) {
    if (counter.left(kind) >= need[kind]) continue;
    const limit = counter.limits[kind]!;
    throw new CommandError(budgetText(new BudgetError("", { kind, limit })), "budget");
  }
}
