"""Measured read sets (docs/read-sets.md): what recording costs, and how many findings' reasons it changes.

Run from the repository root:

    .venv/bin/python bench/bench_read_sets.py cost [--bench bfcl] [--suite banking ...] [--task T ...] [--repeat 3]
        [--json FILE]
    .venv/bin/python bench/bench_read_sets.py reasons AUDIT_DIR [--bench NAME] [--json FILE]
    .venv/bin/python bench/bench_read_sets.py aimed AUDIT_DIR [--json FILE]
    .venv/bin/python bench/bench_read_sets.py aim AUDIT_DIR [AUDIT_DIR ...] [--json FILE]

`cost`: the real `verimut.api.audit` of AgentDojo (default; `--bench bfcl` for BFCL: every suite, every family,
unless `--suite`/`--task` narrow it), in one process, twice
per repeat in alternating order: with the adapter as it is (it records what each verifier reads, and flips each
control's unread collections), and with its `verify_reading` capability taken away (the audit as it was before
recording: `verify`, and a reason from the adapter's source-text `explain`). Medians and their ratio, in wall
time and in CPU time (this process and the forks it waited for), which a shared machine's load moves far less.

`aimed`: the out-of-scope cells a search aimed by the read map would plant (one per confirmed blind spot of the
task's verifier, every cell into a collection it reads), picked from the audit's own scored cells, against every
out-of-scope cell the audit planted: cells, false accepts, verifiers found.

`aim`: audits of one benchmark made with and without `verimut audit --aim` (the aimed search inside the grammar), side
by side: cells, out-of-scope cells (and how many were scored), confirmed false accepts among them, the verifiers
they found, the writes proven unchecked by the read map rather than planted, and the wall time of each audit's run
(runs.jsonl: the manifest's build and the scoring). Says which verifiers one finds and another does not.

`reasons`: for every confirmed false accept of an audit whose cells recorded reads, the reason the source-text
search gives (the adapter's `explain`: AgentDojo's looks for the collection's field names in the verifier's source;
BFCL's says a private attribute is never compared and anything else is; WebArena-Verified's names what the
task's evaluator configuration grades; AppWorld's worker gives none, "none") against
the measurement (the reason the audit wrote: its "never read" part): per differing collection, does each say the
verifier read it or never did? A reason *changes*
when one collection is said read by one and never read by the other. Writes the changed cells' ids (the input of
precision/read_sets_agentdojo.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verimut import adapters
from verimut import api as audit_mod
from verimut.oracle.state import NEW


def _cpu() -> float:
    t = os.times()  # this process and the children it waited for (the report's figures are drawn in forks)
    return t.user + t.system + t.children_user + t.children_system


def _audit(bench: Any, suites: list[str], tasks: Sequence[str] = ()) -> tuple[float, float]:
    """One audit's wall and CPU seconds."""
    with tempfile.TemporaryDirectory() as out:
        began, cpu = time.perf_counter(), _cpu()
        audit_mod.audit(bench, out, suites=suites, tasks=tasks, executor="inprocess")
        return time.perf_counter() - began, _cpu() - cpu


def cost(args: argparse.Namespace) -> dict[str, Any]:
    recording = adapters.load(args.bench)
    plain = dataclasses.replace(recording, verify_reading=None)
    # warm: imports, the suites' default environments (BFCL: one task)
    _audit(plain, args.suite or ([] if args.task else ["banking"]), args.task[:1])
    runs: dict[str, list[float]] = {"recording": [], "without": []}
    cpu: dict[str, list[float]] = {"recording": [], "without": []}
    for i in range(args.repeat):
        order = [("recording", recording), ("without", plain)]
        for name, bench in order if i % 2 == 0 else order[::-1]:
            wall, used = _audit(bench, args.suite, args.task)
            runs[name].append(wall)
            cpu[name].append(used)
            print(f"repeat {i}: {name} {wall:.1f}s wall, {used:.1f}s CPU", file=sys.stderr)
    med = {k: statistics.median(v) for k, v in runs.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    return {
        "bench": args.bench,
        "suites": args.suite or "all",
        "tasks": args.task or "all",
        "runs": runs,
        "cpu": cpu,
        "median_s": med,
        "median_cpu_s": med_cpu,
        "ratio": med["recording"] / med["without"],
        "cpu_ratio": med_cpu["recording"] / med_cpu["without"],
    }


def _old_unread(said: str | None) -> set[str]:
    """The collections an adapter's source-text `explain` says the verifier never reads: AgentDojo's "never reads"
    part, BFCL's "... is private state" part."""
    if not said:
        return set()
    if "never reads " in said:
        return {c.strip() for c in said.split("never reads ", 1)[1].split(",")}
    private = " is private state"
    part = next((p for p in said.removeprefix("multi_turn_checker: ").split("; ") if private in p), "")
    return {c.strip() for c in part.split(private, 1)[0].split(",") if c.strip()}


def _measured_unread(said: str | None) -> set[str]:
    """The collections a measured reason (core/reads.explain) says the verifier never read."""
    if not said or "never read " not in said:
        return set()
    return {c.strip() for c in said.split("never read ", 1)[1].split(";")[0].split(",")}


_REQUEST = re.compile(r"(?:the last|any|no) ([A-Z]+) request to (\S+)")


def _webarena_claims(said: str | None) -> dict[str, str]:
    """What WebArena-Verified's source-text `explain` (the task's evaluator configuration) says is read: the response
    when a response evaluator is named; `creates` or `records` when a named request is a write that lands there (by
    the adapter's own reading of a write, webarena_effects.kind); everything else never ("nothing else in the
    trace")."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src/verimut/adapters/webarena/worker_side"))
    import webarena_effects as effects

    read = {"response"} if said and "the response's" in said else set()
    for method, url in _REQUEST.findall(said or ""):
        if effects.is_write(method, url, None):
            read.add(effects.CREATES if effects.kind(method, url, None) == "create" else effects.RECORDS)
    return {c: ("read" if c in read else "never") for c in (effects.CREATES, effects.RECORDS, "response")}


def _source_claim(name: str, bench: Any, task: str, collections: list[str], c: str) -> str:
    """What the source-text explanation says of collection `c`: "read", "never", or "none" (the adapter gives none)."""
    if bench.explain is None:
        return "none"
    said = bench.explain(task, collections)
    if name == "webarena-verified":
        return _webarena_claims(said).get(c.removesuffix(NEW), "never")
    return "never" if c in _old_unread(said) else "read"


def reasons(args: argparse.Namespace) -> dict[str, Any]:
    audit_dir = Path(args.audit)
    rows = _rows(audit_dir)
    name = args.bench or json.loads((audit_dir / "manifest.json").read_text())["benchmark"]
    bench = adapters.load(name)
    found = [r for r in rows if r["outcome"] == "false_accept" and r["evidence"].get("differs_from_reference")]
    changed: list[dict[str, Any]] = []
    with_reads = 0
    for r in found:
        if "reads" not in r["evidence"]:
            continue
        with_reads += 1
        collections = [d["collection"] for d in r["evidence"]["differs_from_reference"]]
        new_never = _measured_unread(r["reason"])
        moved = {}
        for c in collections:
            old = _source_claim(name, bench, r["task"], collections, c)
            new = "never" if c.removesuffix(NEW) in new_never else "read"
            if old != new:
                moved[c] = {"source_text": old, "measured": new}
        if moved:
            changed.append({"cell_id": r["cell_id"], "collections": moved, "reason": r["reason"]})
    return {
        "audit": str(audit_dir),
        "benchmark": name,
        "false_accepts_with_a_state_difference": len(found),
        "with_reads_recorded": with_reads,
        "reasons_changed": len(changed),
        "changed": changed,
    }


def _rows(audit_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (audit_dir / "cells.jsonl").read_text().splitlines() if line.strip()]


def counts(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """Cells, how many were scored, confirmed false accepts, and the verifiers (tasks) with one."""
    found = [r for r in cells if r["outcome"] == "false_accept"]
    return {
        "cells": len(cells),
        "scored": sum(r["outcome"] not in ("refused", "same_run") for r in cells),
        "false_accepts": len(found),
        "verifiers_found": len({r["task"] for r in found}),
    }


def aim(args: argparse.Namespace) -> dict[str, Any]:
    """Each audit's counts (all cells, and its out-of-scope cells), its aim, and its runs' wall time."""
    out: dict[str, Any] = {}
    found: dict[str, set[str]] = {}
    for given in args.audits:
        audit_dir = Path(given)
        rows = _rows(audit_dir)
        manifest = json.loads((audit_dir / "manifest.json").read_text())
        runs = [json.loads(line) for line in (audit_dir / "runs.jsonl").read_text().splitlines() if line.strip()]
        oos = [r for r in rows if r["family"] == "extra-oos"]
        found[given] = {r["task"] for r in oos if r["outcome"] == "false_accept"}
        out[given] = {
            "aim": manifest["provenance"].get("verimut.aim", "none"),
            "verimut_version": manifest["verimut"],
            "every_cell": counts(rows),
            "out_of_scope": counts(oos),
            "proven_unchecked_not_planted": sum(
                len(r["evidence"].get("detail", {}).get("proven_unchecked", [])) for r in oos
            ),
            "wall_seconds": sum(r["wall_seconds"] for r in runs),
            "manifest_seconds": sum(r["manifest_seconds"] for r in runs),
            "scoring_cpu_seconds": sum(r["scoring_cpu_seconds"] for r in runs),
            "runs": len(runs),
        }
    every = set().union(*found.values()) if found else set()
    for given, mine in found.items():
        out[given]["out_of_scope_verifiers_missed"] = sorted(every - mine)
    return out


def aimed(args: argparse.Namespace) -> dict[str, Any]:
    """The out-of-scope cells an aimed search would plant, chosen from the audit's own scored cells.

    Per effect-contract task, from what its control's verifier read alone (known before any out-of-scope write is
    planted): a collection its verifier never read, confirmed by the flip (`unread_flipped`), is proven unchecked,
    so one write shows the false accept: one cell per such collection is kept (the first in cell-id order), or, the
    stricter aim, one per verifier (the map reports its other blind spots unplanted); every cell that writes a
    collection the verifier does read is kept (only a replay says whether it notices). Each kept cell was
    scored in the audit, so its outcome is a real one. Counts: cells, confirmed false accepts, verifiers with one.
    """
    audit_dir = Path(args.audit)
    rows = _rows(audit_dir)
    controls = {r["task"]: r for r in rows if r["family"] == "control"}
    oos = sorted((r for r in rows if r["family"] == "extra-oos"), key=lambda r: r["cell_id"])

    def chosen(per: str) -> list[dict[str, Any]]:
        kept: list[dict[str, Any]] = []
        spent: set[tuple[str, str]] = set()
        for r in oos:
            blind = {c for c, held in (controls[r["task"]]["evidence"].get("unread_flipped") or {}).items() if held}
            where = str(r["evidence"].get("detail", {}).get("collection", "")).removesuffix(NEW)
            if where in blind:
                key = (r["task"], where if per == "collection" else "")
                if key in spent:
                    continue
                spent.add(key)
            kept.append(r)
        return kept

    def lost(kept: list[dict[str, Any]]) -> list[str]:
        found = {r["task"] for r in kept if r["outcome"] == "false_accept"}
        return sorted({r["task"] for r in oos if r["outcome"] == "false_accept"} - found)

    by_collection, by_verifier = chosen("collection"), chosen("verifier")
    return {
        "audit": str(audit_dir),
        "every_out_of_scope_cell": counts(oos),
        "aimed_one_per_blind_spot": {**counts(by_collection), "verifiers_lost": lost(by_collection)},
        "aimed_one_per_verifier_with_a_blind_spot": {**counts(by_verifier), "verifiers_lost": lost(by_verifier)},
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    c = sub.add_parser("cost")
    c.add_argument("--bench", default="agentdojo", help="agentdojo (default) or bfcl: an adapter that records reads")
    c.add_argument("--suite", action="append", default=[])
    c.add_argument("--task", action="append", default=[])
    c.add_argument("--repeat", type=int, default=3)
    c.add_argument("--json", type=Path)
    r = sub.add_parser("reasons")
    r.add_argument("audit")
    r.add_argument("--bench", help="the benchmark whose explain to ask (default: the audit's own)")
    r.add_argument("--json", type=Path)
    a = sub.add_parser("aimed")
    a.add_argument("audit")
    a.add_argument("--json", type=Path)
    m = sub.add_parser("aim")
    m.add_argument("audits", nargs="+")
    m.add_argument("--json", type=Path)
    args = p.parse_args()
    result = {"cost": cost, "reasons": reasons, "aimed": aimed, "aim": aim}[args.what](args)
    text = json.dumps(result, indent=1)
    if args.json:
        args.json.write_text(text + "\n")
    brief = {k: v for k, v in result.items() if k not in ("changed", "runs")}
    print(json.dumps(brief, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
