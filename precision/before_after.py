"""Before/after: how two audits of one benchmark differ in their findings, each change put down to one rule.

    python precision/before_after.py BEFORE_DIR AFTER_DIR [--md FILE]

Reads each directory's manifest.json and cells.jsonl as plain JSON (no verimut import). For every cell that is
a false accept or a false reject in either audit, it says what the cell became and which of issue 26's rules
moved it, from what the after audit recorded (its outcome, reason and evidence):

    contracts        the task's contract is `goal` (its side-effect families are refused; wrong-value varies
                     only what the goal fixes)
    distinct runs    the cell's run is an earlier cell's (`same_run`)
    observation      a difference the suite's reads show but do not tell apart (`unobserved_through`), or equal
                     states a read tells apart (`observed_by`)
    telemetry check  a declaration the task's verifier grades made the run another effect (not an alternative,
                     or a difference where there was none)
    trace effects    calls the state keeps no record of, or a verifier that grades the calls
    assigned keys    new records matched by content (an order the verifier rejects is now comparable)
    pin strength     a weakly pinned value (`weak_pin_accept`)
    idle writes      (issue 41) a run that leaves out reference writes that changed nothing, for a verifier that
                     grades the calls: it was rejected on the trace, its state decides now (a false reject)
    new telemetry    (issue 41, BFCL 2b) a cell gone because everything its run changed is telemetry the after
                     audit declares and the before audit did not (the write now changes nothing, and is not
                     planted: BFCL's parking-brake force and slope)

Beside the moves, `evidence` lists the findings whose outcome stayed but whose difference from the reference
reads otherwise (issue 41: an AppWorld table the reference's snapshot lacked read as every row added).

and issue 41's (AgentDojo):

    nothing to do    the null run passed on a task with nothing to do (`nothing_to_do`, 1b)
    other subject    a weak pin moved to a value naming another subject than the instruction names: a false
                     accept (`detail.other_subject`, 1c)
    (1a, a repeated call on a trace-graded task judged by the suite's reads, shows as "observation": it is the one
    change to the observation rule since issue 26)

A change none of these explains is printed as "unattributed", for a person to look at.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
from collections import Counter
from pathlib import Path
from typing import Any

FINDINGS = ("false_accept", "false_reject", "vacuous", "weak_pin_accept", "nothing_to_do")


def _load(directory: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    manifest = json.loads((directory / "manifest.json").read_text())
    rows = {}
    for line in (directory / "cells.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows[row["cell_id"]] = row
    return manifest, rows


def _only_telemetry(row: dict[str, Any], patterns: set[str] | frozenset[str]) -> bool:
    """Whether every record a cell's run changed (its difference from the reference) is named by `patterns`
    (`collection glob[key]` or a whole collection glob)."""
    diffs = row.get("evidence", {}).get("differs_from_reference") or []

    def named(coll: str, key: str | None) -> bool:
        for p in patterns:
            glob, _, rest = p.partition("[")
            if fnmatch.fnmatchcase(coll, glob) and (not rest or (key is not None and rest == f"{key}]")):
                return True
        return False

    keys = [(d["collection"], r.get("key")) for d in diffs for part in ("added", "removed", "changed") for r in d[part]]
    return bool(keys) and all(named(c, k) for c, k in keys)


def _rule(
    cid: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    tasks: dict[str, Any],
    graded: set[str],
    new_telemetry: set[str] | frozenset[str] = frozenset(),
) -> str:
    """The rule that moved a cell (from the after audit's record of it; `graded`: tasks whose verifier grades a
    declared telemetry field or mask)."""
    task = (after or before or {}).get("task", cid.split(":")[0])
    if tasks.get(task, {}).get("contract") == "goal" and (after is None or after["outcome"] == "refused"):
        return "contracts"
    if after is None:
        return "new telemetry" if before and _only_telemetry(before, new_telemetry) else "unattributed (cell gone)"
    ev, reason = after.get("evidence", {}), after.get("reason") or ""
    was = before or {}
    if after["outcome"] == "false_reject" and was.get("outcome") == "rejected" and "calls" in (was.get("reason") or ""):
        return "idle writes"
    if after["outcome"] == "same_run":
        return "distinct runs"
    if after["outcome"] == "nothing_to_do":
        return "nothing to do"
    if after["outcome"] == "false_accept" and "other_subject" in ev.get("detail", {}):
        return "other subject"
    if after["outcome"] == "weak_pin_accept":
        return "pin strength"
    if "unobserved_through" in ev or "observed_by" in ev:
        return "observation"
    if ev.get("trace_differs") or "grades the run's calls" in reason or "keeps no record" in reason:
        return "trace effects"
    if "goal" in reason and tasks.get(task, {}).get("contract") == "goal":
        return "contracts"
    if task in graded and (after["outcome"] == "refused" or (before or {}).get("outcome") == "harmless"):
        return "telemetry check"
    if "(new)" in json.dumps(ev.get("differs_from_reference", [])) or "(new)" in reason:
        return "assigned keys"
    if after["outcome"] == "false_reject" and before is not None and before["outcome"] == "refused":
        return "assigned keys"
    return "unattributed"


def compare(before_dir: Path, after_dir: Path) -> dict[str, Any]:
    m_before, before = _load(before_dir)
    m_after, after = _load(after_dir)
    new_telemetry = set(m_after.get("telemetry", [])) - set(m_before.get("telemetry", []))
    tasks = m_after.get("tasks", {})
    graded = {t for ts in m_after.get("graded", {}).values() for t in ts}
    moves: list[dict[str, Any]] = []
    for cid in sorted(set(before) | set(after)):
        b, a = before.get(cid), after.get(cid)
        was = b["outcome"] if b else None
        now = a["outcome"] if a else None
        if was == now or (was not in FINDINGS and now not in FINDINGS):
            continue
        moves.append(
            {"cell_id": cid, "before": was, "after": now, "rule": _rule(cid, b, a, tasks, graded, new_telemetry)}
        )
    kind = {t: f.get("kind", "user") for t, f in tasks.items()}

    def counts(rows: dict[str, dict[str, Any]]) -> dict[str, int]:
        c: Counter[str] = Counter()
        for r in rows.values():
            if r["outcome"] in (*FINDINGS, "same_run"):
                c[f"{r['outcome']} ({kind.get(r['task'], 'user')})"] += 1
        return dict(sorted(c.items()))

    evidence = [
        {"cell_id": cid, "before": _diff_counts(before[cid]), "after": _diff_counts(after[cid])}
        for cid in sorted(set(before) & set(after))
        if before[cid]["outcome"] == after[cid]["outcome"] in FINDINGS
        and _diff_counts(before[cid]) != _diff_counts(after[cid])
    ]
    return {"before": counts(before), "after": counts(after), "moves": moves, "evidence": evidence}


def _diff_counts(row: dict[str, Any]) -> dict[str, str]:
    """A finding's difference from the reference, as counts per collection ("1 changed", "4 added")."""
    out = {}
    for d in (row.get("evidence") or {}).get("differs_from_reference") or []:
        parts = [f"{len(d.get(k) or [])} {k}" for k in ("added", "removed", "changed") if d.get(k)]
        out[d["collection"]] = ", ".join(parts)
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = ["| outcome (task kind) | before | after |", "|---|---|---|"]
    keys = sorted(set(result["before"]) | set(result["after"]))
    lines += [f"| {k} | {result['before'].get(k, 0)} | {result['after'].get(k, 0)} |" for k in keys]
    by_rule: Counter[tuple[str, str, str]] = Counter(
        (m["rule"], str(m["before"]), str(m["after"])) for m in result["moves"]
    )
    lines += ["", "| rule | before | after | cells |", "|---|---|---|---|"]
    lines += [f"| {r} | {b} | {a} | {n} |" for (r, b, a), n in sorted(by_rule.items())]
    if result.get("evidence"):
        lines += ["", "| finding whose difference reads otherwise | before | after |", "|---|---|---|"]
        for e in result["evidence"]:
            before = "; ".join(f"{c}: {n}" for c, n in e["before"].items())
            after = "; ".join(f"{c}: {n}" for c, n in e["after"].items())
            lines.append(f"| `{e['cell_id']}` | {before} | {after} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--md", type=Path, help="write the tables here too")
    parser.add_argument("--json", type=Path, help="write every moved cell here")
    args = parser.parse_args()
    result = compare(args.before, args.after)
    text = markdown(result)
    print(text)
    if args.md:
        args.md.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    unattributed = [m for m in result["moves"] if m["rule"].startswith("unattributed")]
    for m in unattributed:
        print(f"unattributed: {m['cell_id']}: {m['before']} -> {m['after']}")


if __name__ == "__main__":
    main()
