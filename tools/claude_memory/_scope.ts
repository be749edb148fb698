// The scope one command of Claude's memory tool reads and writes with: revisions of its own (so
// its read authorizes only its own write), and the run's identity exactly (run, actor, taint,
// whether reads taint it, its budget), so every version it writes names the run that made it.

import { Scope, shareBudget } from "../../store/scope.ts";

/** A scope for one command of the run whose scope is `run` (`null`: a run without one). */
export function commandScope(run: Scope | null): Scope {
  if (run === null) return new Unnamed();
  const own = new Scope({
    run: run.run,
    actor: run.actor,
    tainted: run.tainted,
    propagateTaint: run.propagateTaint,
  });
  // Its writes count against the run's budget.
  shareBudget(run, own);
  return own;
}

/** Copies into the run's scope a taint the command's own reads caught. */
export function keepTaint(run: Scope | null, own: Scope): void {
  if (run !== null && own.tainted && !run.tainted) run.taint();
}

// A run without a scope names no run: its plain writes record none, and neither may its edits,
// whose scope exists only to hold the revision they check. The stores read the run id through
// this getter when they record a version, and omit it when it is undefined.
class Unnamed extends Scope {
  override get run(): string {
    return undefined as unknown as string;
  }
}
