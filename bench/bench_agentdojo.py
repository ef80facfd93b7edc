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

import argparse
import gc
import importlib.metadata
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

import verimut
from verimut import adapters
from verimut import api as audit_mod
from verimut.core.records import Manifest
from verimut.engine import pipeline
from verimut.engine.store import Store
from verimut.executors.inprocess import InProcess
from verimut.findings import summary as summary_mod

SUITES = ("workspace", "travel", "banking", "slack")
DEFAULT_JSON = Path(__file__).resolve().parent / "out" / "latest.json"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--suite", action="append", choices=SUITES, help="an AgentDojo suite (repeatable; default: all four)"
    )
    p.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="measure N times, alternating the order; report medians"
    )
    p.add_argument(
        "--json",
        type=Path,
        default=DEFAULT_JSON,
        metavar="PATH",
        help=f"where to write every figure (default {DEFAULT_JSON})",
    )
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    args.suite = list(dict.fromkeys(args.suite or SUITES))  # keep order, drop duplicates
    return args


# -- the measurements ------------------------------------------------------------------------


def measure_audit(bench: Any, suites: Sequence[str]) -> tuple[dict[str, Any], summary_mod.Summary]:
    with tempfile.TemporaryDirectory(prefix="verimut-bench-audit-") as tmp:
        began = time.perf_counter()
        s = audit_mod.audit(bench, Path(tmp), suites=suites, quiet=True)
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


def measure_bare(bench: Any, cells: Sequence[Any], snapshots: bool) -> dict[str, Any]:
    verify_s = 0.0
    verify_errors = 0
    reset, execute, verify, snapshot = bench.reset, bench.execute, bench.verify, bench.snapshot
    perf = time.perf_counter
    began = perf()
    if snapshots:
        for cell in cells:
            ep = reset(cell.task)
            snapshot(ep)
            for a in cell.run.actions:
                execute(ep, a)
            snapshot(ep)
            try:
                verify(ep, cell.run)
            except Exception:  # noqa: BLE001  (count what the verifier raises, as the scorer does)
                verify_errors += 1
    else:
        for cell in cells:
            ep = reset(cell.task)
            for a in cell.run.actions:
                execute(ep, a)
            v0 = perf()
            try:
                verify(ep, cell.run)
            except Exception:  # noqa: BLE001  (count what the verifier raises, as the scorer does)
                verify_errors += 1
            verify_s += perf() - v0
    total = perf() - began
    out: dict[str, Any] = {"total_s": total, "verify_errors": verify_errors}
    if not snapshots:
        out["verify_s"] = verify_s
    return out


def action_error_cells(bench: Any, cells: Sequence[Any]) -> int:
    """Cells whose run has an action that raises (counted once, outside any timing)."""
    n = 0
    for cell in cells:
        ep = bench.reset(cell.task)
        if any(bench.execute(ep, a).error is not None for a in cell.run.actions):
            n += 1
    return n


def timed(fn: Callable[[], Any]) -> Any:
    gc.collect()
    return fn()


# -- reporting -------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "agentdojo": importlib.metadata.version("agentdojo"),
        "pydantic": importlib.metadata.version("pydantic"),
        "verimut": verimut.__version__,
        "tempdir": tempfile.gettempdir(),
    }


def median_of(runs: list[dict[str, Any]], kind: str, key: str) -> float:
    return statistics.median(r[kind][key] for r in runs)


def table(fig: dict[str, Any], counts: dict[str, Any], args: argparse.Namespace) -> str:
    ms = lambda s: f"{1000 * s:.2f}"
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
    head = (
        f"AgentDojo {counts['benchmark_version']} (agentdojo {counts['agentdojo']}), suites: {', '.join(args.suite)}; "
        f"median of {args.repeat}; Python {counts['python']}, {counts['cpu_count']} CPUs"
    )
    lines = [head, "", "| measure | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    info = machine()

    t0 = time.perf_counter()
    bench = adapters.load("agentdojo")
    adapter_load_s = time.perf_counter() - t0
    known = {t.split("/", 1)[0] for t in bench.tasks()}
    missing = [s for s in args.suite if s not in known]
    if missing:
        print(f"unknown suite(s) for AgentDojo {bench.version}: {', '.join(missing)}", file=sys.stderr)
        return 2
    # Load each suite's default environment once, outside every measurement.
    t0 = time.perf_counter()
    first_task = {}
    for t in bench.tasks():
        first_task.setdefault(t.split("/", 1)[0], t)
    for s in args.suite:
        bench.reset(first_task[s])
    env_load_s = time.perf_counter() - t0

    manifest: Manifest | None = None
    cells: list[Any] = []
    runs: list[dict[str, Any]] = []
    summaries: list[tuple[str, dict[str, Any]]] = []
    hashes: set[str] = set()

    def do_phased(r: dict[str, Any]) -> None:
        nonlocal manifest, cells
        r["phased"], m, s = timed(lambda: measure_phased(bench, args.suite))
        hashes.add(m.content_hash)
        if manifest is None:
            manifest = m
            cells = [c for c in m.cells if c.run is not None]
        summaries.append(("phased", s.counts))

    def do_audit(r: dict[str, Any]) -> None:
        r["audit"], s = timed(lambda: measure_audit(bench, args.suite))
        hashes.add(s.manifest_hash)
        summaries.append(("audit", s.counts))

    def do_bare(r: dict[str, Any]) -> None:
        r["bare"] = timed(lambda: measure_bare(bench, cells, snapshots=False))

    def do_snap(r: dict[str, Any]) -> None:
        r["snap"] = timed(lambda: measure_bare(bench, cells, snapshots=True))

    forward = [("phased", do_phased), ("audit", do_audit), ("bare", do_bare), ("snap", do_snap)]
    for i in range(args.repeat):
        order = forward if i % 2 == 0 else forward[::-1]  # repeat 0 is forward: the manifest comes first
        r: dict[str, Any] = {"order": [name for name, _ in order]}
        for name, fn in order:
            print(f"[repeat {i + 1}/{args.repeat}] {name} ...", file=sys.stderr, flush=True)
            fn(r)
        runs.append(r)

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
        "adapter_load_s": adapter_load_s,
        "env_load_s": env_load_s,
        "audit_total_s": median_of(runs, "audit", "total_s"),
        "phased_total_s": median_of(runs, "phased", "total_s"),
        "build_s": median_of(runs, "phased", "build_s"),
        "score_s": median_of(runs, "phased", "score_s"),
        "summary_s": median_of(runs, "phased", "summary_s"),
        "scorer_sum_s": median_of(runs, "phased", "scorer_sum_s"),
        "bare_s": median_of(runs, "bare", "total_s"),
        "snap_s": median_of(runs, "snap", "total_s"),
        "verify_s": median_of(runs, "bare", "verify_s"),
    }
    fig["score_per_cell_s"] = fig["score_s"] / n_run
    fig["bare_per_cell_s"] = fig["bare_s"] / n_run
    fig["snap_per_cell_s"] = fig["snap_s"] / n_run
    fig["verify_per_cell_s"] = fig["verify_s"] / n_run
    fig["ratio_audit_bare"] = fig["score_s"] / fig["bare_s"]
    fig["ratio_audit_verify"] = fig["score_s"] / fig["verify_s"]
    fig["ratio_snap_bare"] = fig["snap_s"] / fig["bare_s"]
    fig["ledger_and_bookkeeping_s"] = fig["score_s"] - fig["scorer_sum_s"]

    report = {
        "machine": info,
        "args": {"suites": args.suite, "repeat": args.repeat},
        "manifest_hash": manifest.content_hash,
        "consistent_across_runs": consistent,
        "counts": counts,
        "median": fig,
        "runs": runs,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_bytes(msgspec.json.format(msgspec.json.encode(report)))

    print(table(fig, counts, args))
    if not consistent:
        print("\nWARNING: manifests or outcome counts differed between runs (see the JSON).")
    print(f"\n(all figures: {args.json})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
