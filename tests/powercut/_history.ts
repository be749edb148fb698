// The history half of the power-cut check (store/history.ts): after every cut, history and head
// agree (the newest version is what the key holds, and every version reads back whole), and for
// the durable workloads every acknowledged write of the round has its version, in order, and no
// write that did not land has one.

import { history, readVersion, type Store, type Version } from "../../mod.ts";
import { entryFor, versionOf } from "./_content.ts";
import type { KeyModel, KeyValue } from "./_model.ts";
import type { Found } from "./_observe.ts";

/** One problem, in words, and the key it is about. */
export interface Finding {
  readonly key: string;
  readonly text: string;
}

/** What the history check found. */
export interface HistoryFindings {
  /** History and head disagree, or a version does not read back whole. */
  readonly disagree: Finding[];
  /** An acknowledged write of a durable workload has no version (or one that did not land has). */
  readonly missing: Finding[];
}

function show(v: KeyValue | undefined): string {
  return v === undefined ? "no version" : v === null ? "a delete" : `version ${v}`;
}

function valueOf(key: string, v: Version): KeyValue | undefined {
  return v.op === "delete" ? null : versionOf(key, v.description ?? "");
}

function F(key: string, text: string): Finding {
  return { key, text };
}

function same(a: readonly KeyValue[], b: readonly KeyValue[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Checks every key that is not torn against its history. */
export async function checkHistory(
  store: Store,
  keys: Iterable<KeyModel>,
  found: ReadonlyMap<string, Found>,
): Promise<HistoryFindings> {
  const disagree: Finding[] = [];
  const missing: Finding[] = [];
  for (const k of keys) {
    const f = found.get(k.key);
    if (f === undefined || "torn" in f) continue;
    let versions: Version[];
    try {
      versions = (await history(store, k.key)).reverse(); // oldest first
    } catch (e) {
      disagree.push(F(k.key, `history() failed: ${e instanceof Error ? e.message : e}`));
      continue;
    }
    const newest = versions[versions.length - 1];
    const newestValue = newest === undefined ? undefined : valueOf(k.key, newest);
    // A key that holds nothing may have no version at all only if it never held anything.
    if (newestValue !== f.value && !(f.value === null && newest === undefined)) {
      disagree.push(
        F(k.key, `the head holds ${show(f.value)}, its newest version is ${show(newestValue)}`),
      );
    }
    // The round started from the run's own write (timeline[0]); what came after it must be the
    // acknowledged writes, and the write in flight only if it landed.
    const start = k.timeline[0];
    // (A round starts from nothing only after the run's own write failed: nothing to anchor to.)
    if (start === null || start === undefined) continue;
    const from = versions.findLastIndex((v) => valueOf(k.key, v) === start);
    if (from < 0) {
      (k.group.durable ? missing : disagree).push(
        F(k.key, `the version of the round's first write (version ${start}) is gone`),
      );
      continue;
    }
    for (const v of versions.slice(from)) {
      if (v.op === "delete") continue;
      const value = valueOf(k.key, v);
      try {
        const e = await readVersion(store, k.key, v.revision);
        const want = value === undefined || value === null ? undefined : entryFor(k.key, value);
        if (
          want === undefined || e.description !== want.description || e.content !== want.content
        ) {
          disagree.push(
            F(k.key, `version ${v.revision} does not read back as the write it records`),
          );
        }
      } catch (e) {
        disagree.push(
          F(k.key, `version ${v.revision} cannot be read: ${e instanceof Error ? e.message : e}`),
        );
      }
    }
    if (!k.group.durable) continue;
    const after = versions.slice(from + 1).map((v) => valueOf(k.key, v)).map((v) =>
      v === undefined ? -1 : v
    );
    const acked = k.timeline.slice(1);
    const landed = k.pending !== undefined && same(after, [...acked, k.pending.value]);
    if (!same(after, acked) && !landed) {
      missing.push(
        F(
          k.key,
          `the versions after the round's first write are [${
            after.map(show)
          }], the acknowledged writes [${acked.map(show)}]${
            k.pending === undefined ? "" : ` (in flight: ${show(k.pending.value)})`
          }`,
        ),
      );
    }
  }
  return { disagree, missing };
}
