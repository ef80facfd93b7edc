"""Benchmark: what a verimut audit of AgentDojo costs, against the irreducible work under it.

Run from the repository root:

    .venv/bin/python bench/bench_agentdojo.py                      # all four suites, once
    .venv/bin/python bench/bench_agentdojo.py --suite banking      # one suite (repeatable)
    .venv/bin/python bench/bench_agentdojo.py --repeat 3 --json /tmp/b.json

Everything runs in one process, on one adapter object, after the suites' default
environments have been loaded once (that load is timed apart, as `env_load_s`). Each
repeat measures, in alternating order (forward on even repeats, backward on odd ones, so
that drift on a noisy machine does not always favour the same measurement):

- `audit`: the real `verimut.api.audit(bench, tmp, suites=..., quiet=True)`, end to end,
  into a fresh temporary directory.
- `phased`: the same pipeline called phase by phase into another fresh directory:
  `audit.prepare` (manifest building: two replays per reference run, the idempotence
  census, the fault grammar, the atomic manifest write), `audit.score_all` with
  `verimut.executors.InProcess()` (replay every cell, diff the end state, call the verifier,
  append to the fsync'd ledger), and `summary.write`. Each phase is timed.
- `bare`: for exactly the manifest's cells that have a run (refused cells have none), a
  plain loop doing only what cannot be avoided: `bench.reset(task)`, `bench.execute` of
  every action, `bench.verify`. No snapshot, no diff, no ledger. The `bench.verify` calls
  alone are also summed: that sum (`verify_s`) is the cost floor, the verifier's own time.
- `snap`: the bare loop plus `bench.snapshot(ep)` before and after the actions, to show
  how much of the overhead is turning the environment into plain data.

The figures reported are medians over the repeats. Per-cell figures divide by the number
of cells that have a run (the cells the bare loop replays). The bare loop executes every
action of a run, whereas the scorer stops a replay at the first action that raises and
then skips the verifier for non-control cells; the counts of such cells are reported
(`action_error_cells`) so the reader can judge that difference.

stdout gets a short markdown table; every figure, each repeat's raw numbers and the
machine facts go to the JSON file (default bench/out/latest.json next to this script).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verimut import api as audit_mod
from verimut.core.records import Manifest
from verimut.engine import pipeline
from verimut.engine.store import Store
from verimut.executors.inprocess import InProcess
from verimut.findings import summary as summary_mod

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h

DEFAULT_JSON = h.OUT / "latest.json"


# -- the measurements ------------------------------------------------------------------------


def measure_audit(bench: Any, suites: Sequence[str]) -> tuple[dict[str, Any], summary_mod.Summary]:
    with tempfile.TemporaryDirectory(prefix="verimut-bench-audit-") as tmp:
        began = time.perf_counter()
        s = audit_mod.audit(bench, Path(tmp), suites=suites)
        total = time.perf_counter() - began
    return {"total_s": total}, s


def measure_phased(bench: Any, suites: Sequence[str]) -> tuple[dict[str, Any], Manifest, summary_mod.Summary]:
    chosen = pipeline.select_tasks(bench.tasks(), suites)
    families = pipeline.select_families()
    with tempfile.TemporaryDirectory(prefix="verimut-bench-phased-") as tmp:
        out = Path(tmp)
        t0 = time.perf_counter()
        m = pipeline.prepare(bench, Store(out), chosen, families, lambda _: None)
        t1 = time.perf_counter()
        rows = pipeline.score_all(bench, m, Store(out), InProcess())
        t2 = time.perf_counter()
        s = summary_mod.write(m, rows, Store(out))
        t3 = time.perf_counter()
    return (
        {
            "build_s": t1 - t0,
            "score_s": t2 - t1,
            "summary_s": t3 - t2,
            "total_s": t3 - t0,
            # Sum of the scorer's own per-cell timings (Scorer.score); score_s minus this is the
            # ledger (one fsync per cell) and the control-first bookkeeping around it.
            "scorer_sum_s": sum(r.seconds for r in rows.values()),
        },
        m,
        s,
    )


def action_error_cells(bench: Any, cells: Sequence[Any]) -> int:
    """Cells whose run has an action that raises (counted once, outside any timing)."""
    n = 0
    for cell in cells:
        ep = bench.reset(cell.task)
        if any(bench.execute(ep, a).error is not None for a in cell.run.actions):
            n += 1
    return n


# -- reporting -------------------------------------------------------------------------------


def table(fig: dict[str, Any], counts: dict[str, Any]) -> list[tuple[str, str]]:
    def ms(s: float) -> str:
        return f"{1000 * s:.2f}"

    rows = [
        ("cells in manifest / with a run (per-cell denominator)", f"{counts['cells']} / {counts['with_run']}"),
        ("cells scored by replay (not refused, not unscorable)", f"{counts['replayed']}"),
        ("audit, whole `audit()` (s)", f"{fig['audit_total_s']:.2f}"),
        ("manifest build, `prepare` (s)", f"{fig['build_s']:.2f}"),
        ("audit scoring, `score_all` (s)", f"{fig['score_s']:.2f}"),
        ("audit scoring wall per cell (ms)", ms(fig["score_per_cell_s"])),
        ("bare loop per cell (ms)", ms(fig["bare_per_cell_s"])),
        ("bare + snapshots per cell (ms)", ms(fig["snap_per_cell_s"])),
        ("verifier-only per cell (ms)", ms(fig["verify_per_cell_s"])),
        ("ratio audit scoring / bare", f"{fig['ratio_audit_bare']:.2f}x"),
        ("ratio audit scoring / verifier-only", f"{fig['ratio_audit_verify']:.1f}x"),
    ]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    args = h.arguments(__doc__ or "", DEFAULT_JSON, argv, repeat=1)
    info = h.machine("agentdojo", "pydantic")
    bench, loads = h.load_agentdojo(args.suite)

    manifest: Manifest | None = None
    cells: list[Any] = []
    summaries: list[tuple[str, dict[str, Any]]] = []
    hashes: set[str] = set()

    def do_phased() -> dict[str, Any]:
        nonlocal manifest, cells
        fig, m, s = measure_phased(bench, args.suite)
        hashes.add(m.content_hash)
        if manifest is None:
            manifest = m
            cells = [c for c in m.cells if c.run is not None]
        summaries.append(("phased", s.counts))
        return fig

    def do_audit() -> dict[str, Any]:
        fig, s = measure_audit(bench, args.suite)
        hashes.add(s.manifest_hash)
        summaries.append(("audit", s.counts))
        return fig

    def do_bare(snapshots: bool) -> dict[str, Any]:
        done = h.bare(bench, cells, snapshots=snapshots, time_verify=not snapshots)
        return {"total_s": done.seconds, "verify_errors": done.errors} | (
            {} if snapshots else {"verify_s": done.verify_s}
        )

    # Repeat 0 is forward: the manifest comes first.
    runs = h.alternate(
        args.repeat,
        [("phased", do_phased), ("audit", do_audit), ("bare", lambda: do_bare(False)), ("snap", lambda: do_bare(True))],
    )

    assert manifest is not None
    n_run = len(cells)
    # Outcome counts of the last phased run: rows that the scorer actually replayed.
    last_counts = next(c for kind, c in reversed(summaries) if kind == "phased")
    refused_cells = sum(1 for c in manifest.cells if c.run is None)
    counts = {
        "cells": len(manifest.cells),
        "with_run": n_run,
        "refused_no_run": refused_cells,
        "replayed": sum(n for fam in last_counts.values() for o, n in fam.items() if o != "refused"),
        "tasks": len(manifest.tasks),
        "actions_in_runs": sum(len(c.run.actions) for c in cells),
        "action_error_cells": action_error_cells(bench, cells),
        "outcomes": last_counts,
        "benchmark_version": bench.version,
        "agentdojo": info["agentdojo"],
        "python": info["python"],
        "cpu_count": info["cpu_count"],
    }
    consistent = len(hashes) == 1 and all(c == summaries[0][1] for _, c in summaries)

    fig: dict[str, Any] = {
        **loads,
        "audit_total_s": h.median(runs, "audit", "total_s"),
        "phased_total_s": h.median(runs, "phased", "total_s"),
        "build_s": h.median(runs, "phased", "build_s"),
        "score_s": h.median(runs, "phased", "score_s"),
        "summary_s": h.median(runs, "phased", "summary_s"),
        "scorer_sum_s": h.median(runs, "phased", "scorer_sum_s"),
        "bare_s": h.median(runs, "bare", "total_s"),
        "snap_s": h.median(runs, "snap", "total_s"),
        "verify_s": h.median(runs, "bare", "verify_s"),
    }
    fig["score_per_cell_s"] = fig["score_s"] / n_run
    fig["bare_per_cell_s"] = fig["bare_s"] / n_run
    fig["snap_per_cell_s"] = fig["snap_s"] / n_run
    fig["verify_per_cell_s"] = fig["verify_s"] / n_run
    # Ratios inside each repeat, their median (the harness's rule).
    fig["ratio_audit_bare"] = h.ratios(runs, ["phased", "score_s"], ["bare", "total_s"])["median"]
    fig["ratio_audit_verify"] = h.ratios(runs, ["phased", "score_s"], ["bare", "verify_s"])["median"]
    fig["ratio_snap_bare"] = h.ratios(runs, ["snap", "total_s"], ["bare", "total_s"])["median"]
    fig["ledger_and_bookkeeping_s"] = fig["score_s"] - fig["scorer_sum_s"]

    report = {
        "args": {"suites": args.suite, "repeat": args.repeat},
        "manifest_hash": manifest.content_hash,
        "consistent_across_runs": consistent,
        "counts": counts,
        "median": fig,
        "runs": runs,
        "warnings": [] if consistent else ["manifests or outcome counts differed between runs (see the JSON)"],
    }
    h.finish(h.agentdojo_head(bench, info, args), table(fig, counts), info, args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
