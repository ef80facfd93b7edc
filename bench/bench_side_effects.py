"""Benchmark: what side-effect cells (appended writes) cost through verimut, against a bare loop of the same calls.

Run from the repository root:

    .venv/bin/python bench/bench_side_effects.py --repeat 5                    # all four suites
    .venv/bin/python bench/bench_side_effects.py --suite banking --repeat 3    # one suite (repeatable)
    .venv/bin/python bench/bench_side_effects.py --no-cli                      # skip the whole-audit wall time

Everything but the whole-audit wall time runs in one process, on one AgentDojo adapter object,
after each chosen suite's default environment has been loaded once (`env_load_s`).

The side-effect cells. A side-effect cell's run is its task's reference run with writes after it:
- `extra-oos` cells: when the fault family `extra-oos` is registered (the grammar's out-of-scope
  write), its cells, as the manifest builder makes them. Until then, the same shape built here:
  per task, for each write tool used by another task of the same suite (first such task in sorted
  order), that task's write appended to the reference run (one cell per tool);
- `extra` cells whose run extends the reference run (the last write repeated when it is the last
  action).
The manifest holds them and every task's control, is built once with `manifest.build`, then
written and read back (as `audit.prepare` does). Controls are part of what is timed on both sides.

Each repeat runs, in alternating order (forward on even repeats, backward on odd ones), each after
a `gc.collect()`:

- `verimut`: `audit.score_all(bench, m, store, InProcess())` into a fresh directory: controls
  first, then the side-effect cells grouped by task. Each task's reference run is replayed once
  and kept (the Replayer's checkpoint); a side-effect cell forks its end, executes only the
  appended writes, snapshots, diffs the end against the reference's and the start, calls the
  verifier, classifies, and appends the row to the fsync'd ledger.
- `bare`: the same calls with nothing around them: per task, `reset`, `snapshot`, every reference
  action, `snapshot` (once); per cell, `fork` of that end, `execute` of the appended actions,
  `snapshot`, `verify` (a control: `fork`, `verify`). No diff, no ledger, no classification.
- `replayed`: `verimut` with fork-state scoring off (the adapter with `fork=None`): each cell
  replayed from `reset`, as before. The ratio `verimut / replayed` is what forking saves.
- `fault_end` and `fault_prefix`: the default fault arm (`audit.select_families()`, built once)
  through `score_all`, with the Replayer as shipped (fork only the reference end) and with
  `prefixes=True` (also fork after each reference action, and start any run that leaves the
  reference after action k from there). Their ratio says whether forking shorter prefixes pays.

The ratio `verimut / bare` is taken inside each repeat (the machine is shared and noisy); the
report gives its min and median over the repeats, and the medians of every time. Per-cell figures
divide by the side-effect manifest's cells (controls included). Ledgers are compared, ignoring
`seconds`: `verimut` against `replayed`, `fault_end` against `fault_prefix`; verdicts of `bare`
against the ledger's. Any difference is printed as a WARNING.

Unless `--no-cli`, each repeat also times the whole default `verimut audit agentdojo` (every
suite, the default process pool on this machine's cores, report.html included) as a subprocess:
interpreter start-up and AgentDojo's import included.

stdout gets a markdown table; every figure and each repeat's raw numbers go to the JSON file
(default bench/out/side-effects-latest.json).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from verimut.core.benchmark import Adapter
from verimut.core.records import Cell, Manifest, cell_id
from verimut.core.replay import Replayer, shared_prefix
from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline
from verimut.engine import scorer as scorer_mod
from verimut.engine.store import Store
from verimut.executors.inprocess import InProcess
from verimut.grammar.faults import FAMILIES

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h

DEFAULT_JSON = h.OUT / "side-effects-latest.json"


# -- the side-effect manifest ------------------------------------------------------------------


def appended_writes(bench: Adapter, m: Manifest) -> list[Cell]:
    """Per task, one cell per write tool of the suite's other tasks: the reference run, then that write."""
    cells = []
    for task in m.tasks:
        suite = task.split("/", 1)[0]
        reference = m.tasks[task].reference
        library: dict[str, tuple[str, Any]] = {}
        for other in sorted(t for t in m.tasks if t.startswith(f"{suite}/") and t != task):
            for a in m.tasks[other].reference.actions:
                if bench.is_write(a) and a not in reference.actions:
                    library.setdefault(a.name, (other, a))
        for tool, (source, action) in sorted(library.items()):
            run = reference.replace_actions([*reference.actions, action])
            note = f"appended {source}'s write {action.describe()}"
            detail = {"source_task": source, "tool": tool}
            cells.append(Cell(cell_id(task, "extra-oos", tool), task, "extra-oos", tool, run, note, detail))
    return cells


def side_effect_manifest(bench: Adapter, tasks: Sequence[str]) -> tuple[Manifest, str]:
    oos = "extra-oos" in FAMILIES
    m = manifest_mod.build(bench, tasks, ["extra", "extra-oos"] if oos else ["extra"])
    extends = [
        c
        for c in m.cells
        if c.run is not None
        and (c.is_control or shared_prefix(c.run, m.tasks[c.task].reference) == len(m.tasks[c.task].reference.actions))
    ]
    cells = extends if oos else [*extends, *appended_writes(bench, m)]
    cells.sort(key=lambda c: list(m.tasks).index(c.task))
    m = msgspec.structs.replace(m, cells=cells, families=sorted({c.family for c in cells} - {"control"}))
    m = msgspec.structs.replace(m, content_hash=manifest_mod.content_hash(m))
    return m, "the extra-oos family" if oos else "built by this script (extra-oos is not registered)"


def reread(m: Manifest) -> Manifest:
    with tempfile.TemporaryDirectory(prefix="verimut-bench-se-m-") as tmp:
        store = Store(Path(tmp))
        store.write_manifest(m)
        return store.read_manifest()


# -- the measurements --------------------------------------------------------------------------


@contextmanager
def prefix_forks() -> Iterator[None]:
    """Scorers built inside this block fork reference prefixes too (`Replayer(..., prefixes=True)`)."""
    original = scorer_mod.Replayer
    scorer_mod.Replayer = partial(Replayer, prefixes=True)  # type: ignore[misc]
    try:
        yield
    finally:
        scorer_mod.Replayer = original  # type: ignore[misc]


def measure_score_all(bench: Adapter, m: Manifest, prefixes: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="verimut-bench-se-") as tmp:
        store = Store(Path(tmp))
        store.write_manifest(m)  # outside the timer, as `prepare` leaves the directory
        with prefix_forks() if prefixes else nullcontext():
            began = time.perf_counter()
            rows = pipeline.score_all(bench, m, store, InProcess())
            total = time.perf_counter() - began
        ledger = h.plain_rows(store.rows().values())
    return {"total_s": total, "scorer_sum_s": sum(r.seconds for r in rows.values())}, ledger


def measure_bare(bench: Adapter, m: Manifest) -> tuple[dict[str, Any], dict[str, bool | None]]:
    fork, reset, execute, snapshot, verify = bench.fork, bench.reset, bench.execute, bench.snapshot, bench.verify
    assert fork is not None
    verdicts: dict[str, bool | None] = {}
    perf = time.perf_counter
    began = perf()
    ends: dict[str, Any] = {}
    for cell in m.cells:
        assert cell.run is not None
        reference = m.tasks[cell.task].reference
        if cell.task not in ends:
            ep = reset(cell.task)
            snapshot(ep)
            for a in reference.actions:
                execute(ep, a)
            snapshot(ep)
            ends = {cell.task: ep}  # one task at a time, as cells arrive
        ep = fork(ends[cell.task])
        if not cell.is_control:
            for a in cell.run.actions[len(reference.actions) :]:
                execute(ep, a)
            snapshot(ep)
        try:
            verdicts[cell.cell_id] = verify(ep, cell.run).passed
        except Exception:  # noqa: BLE001 - the verifier is the benchmark's code; an error is a verdict of None
            verdicts[cell.cell_id] = None
    return {"total_s": perf() - began}, verdicts


def measure_cli() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="verimut-bench-se-cli-") as tmp:
        out = Path(tmp) / "audit"
        cmd = [sys.executable, "-m", "verimut.cli", "audit", "agentdojo", "--out", str(out), "-q"]
        began = time.perf_counter()
        done = subprocess.run(cmd, cwd=h.ROOT, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - began
        cells = sum(1 for line in (out / "cells.jsonl").read_text().splitlines() if line.strip())
    return {"wall_s": wall, "exit_code": done.returncode, "cells": cells, "stderr_tail": done.stderr[-300:]}


# -- reporting ---------------------------------------------------------------------------------


def table(fig: dict[str, Any], counts: dict[str, Any], args: argparse.Namespace) -> tuple[str, list[tuple[str, str]]]:
    def ms(s: float) -> str:
        return f"{1000 * s:.2f}"

    rows = [
        (
            "side-effect cells / controls (per-cell denominator: both)",
            f"{counts['side_effect']} / {counts['controls']}",
        ),
        ("  of which appended out-of-scope writes / repeated last writes", f"{counts['oos']} / {counts['extra']}"),
        ("verimut, `score_all`, fork-state scoring, per cell (ms)", ms(fig["verimut_per_cell_s"])),
        ("bare loop (fork, execute, snapshot, verify), per cell (ms)", ms(fig["bare_per_cell_s"])),
        ("**verimut / bare**, min / median over repeats", f"**{fig['ratio_min']:.2f}x / {fig['ratio_median']:.2f}x**"),
        ("verimut with every cell replayed from reset, per cell (ms)", ms(fig["replayed_per_cell_s"])),
        ("fork-state / replayed from reset, median", f"{fig['ratio_fork_replayed_median']:.2f}x"),
        ("default fault arm, forking the reference end only, per cell (ms)", ms(fig["fault_end_per_cell_s"])),
        ("default fault arm, also forking shorter prefixes, per cell (ms)", ms(fig["fault_prefix_per_cell_s"])),
        ("prefix forks / end fork only, median", f"{fig['ratio_prefix_end_median']:.2f}x"),
        ("ledgers fork on vs off, prefix on vs off: identical", "yes" if counts["identical"] else "NO"),
    ]
    if "cli_wall_median_s" in fig:
        rows.append(
            (
                f"whole `verimut audit agentdojo` wall ({counts['cli_cells']} cells, {os.cpu_count()} cores), min / median (s)",
                f"{fig['cli_wall_min_s']:.1f} / {fig['cli_wall_median_s']:.1f}",
            )
        )
    head = (
        f"AgentDojo {counts['benchmark_version']} (agentdojo {counts['agentdojo']}), suites: {', '.join(args.suite)}; "
        f"{args.repeat} repeats; side-effect cells {counts['source']}"
    )
    return head, rows


def main(argv: Sequence[str] | None = None) -> int:
    def more(p: argparse.ArgumentParser) -> None:
        p.add_argument("--no-cli", action="store_true", help="skip the whole `verimut audit agentdojo` wall time")

    args = h.arguments(__doc__ or "", DEFAULT_JSON, argv, repeat=3, more=more)
    info = h.machine("agentdojo")
    bench, loads = h.load_agentdojo(args.suite)

    tasks = pipeline.select_tasks(bench.tasks(), args.suite)
    print("building the manifests once ...", file=sys.stderr, flush=True)
    se_m, source = side_effect_manifest(bench, tasks)
    se_m = reread(se_m)
    fault_m = reread(manifest_mod.build(bench, tasks, pipeline.select_families()))
    replayed_bench = dataclasses.replace(bench, fork=None)
    n = len(se_m.cells)
    n_fault = sum(c.run is not None for c in fault_m.cells)

    ledgers: list[dict[str, dict[str, Any]]] = []  # one dict a repeat, by measurement
    bare_verdicts: list[dict[str, bool | None]] = []

    def scored(name: str, adapter: Adapter, m: Manifest, prefixes: bool = False) -> dict[str, Any]:
        fig, ledger = measure_score_all(adapter, m, prefixes)
        if not ledgers or name in ledgers[-1]:
            ledgers.append({})
        ledgers[-1][name] = ledger
        return fig

    def bare() -> dict[str, Any]:
        fig, verdicts = measure_bare(bench, se_m)
        bare_verdicts.append(verdicts)
        return fig

    measures = [
        ("verimut", lambda: scored("verimut", bench, se_m)),
        ("bare", bare),
        ("replayed", lambda: scored("replayed", replayed_bench, se_m)),
        ("fault_end", lambda: scored("fault_end", bench, fault_m)),
        ("fault_prefix", lambda: scored("fault_prefix", bench, fault_m, prefixes=True)),
    ]
    runs = h.alternate(args.repeat, measures + ([] if args.no_cli else [("cli", measure_cli)]))
    warnings: list[str] = []
    for i, r in enumerate(runs):
        r["ratio"] = r["verimut"]["total_s"] / r["bare"]["total_s"]
        r["ratio_fork_replayed"] = r["verimut"]["total_s"] / r["replayed"]["total_s"]
        r["ratio_prefix_end"] = r["fault_prefix"]["total_s"] / r["fault_end"]["total_s"]
        kept = ledgers[i]
        for a, b in (("verimut", "replayed"), ("fault_end", "fault_prefix")):
            diff = h.differences(kept[a], kept[b])
            if diff:
                warnings.append(f"repeat {i + 1}: ledgers {a} and {b} differ in {len(diff)} cell(s), e.g. {diff[:3]}")
        called = {k: v["verdict"] for k, v in kept["verimut"].items() if v["verdict"] is not None}
        mismatch = sorted(k for k, v in called.items() if bare_verdicts[i].get(k) != v)
        if mismatch:
            warnings.append(f"repeat {i + 1}: bare verdicts differ from the ledger's in {mismatch[:3]}")
        if not args.no_cli and r["cli"]["exit_code"] not in (0, 1):
            warnings.append(f"repeat {i + 1}: verimut audit exited {r['cli']['exit_code']}: {r['cli']['stderr_tail']}")

    def med(kind: str) -> float:
        return h.median(runs, kind, "total_s")

    fig: dict[str, Any] = {
        **loads,
        "verimut_per_cell_s": med("verimut") / n,
        "bare_per_cell_s": med("bare") / n,
        "replayed_per_cell_s": med("replayed") / n,
        "ratio_min": min(r["ratio"] for r in runs),
        "ratio_median": h.median(runs, "ratio"),
        "ratio_fork_replayed_median": h.median(runs, "ratio_fork_replayed"),
        "fault_end_per_cell_s": med("fault_end") / n_fault,
        "fault_prefix_per_cell_s": med("fault_prefix") / n_fault,
        "ratio_prefix_end_median": h.median(runs, "ratio_prefix_end"),
    }
    if not args.no_cli:
        walls = [r["cli"]["wall_s"] for r in runs]
        fig["cli_wall_min_s"], fig["cli_wall_median_s"] = min(walls), h.median(runs, "cli", "wall_s")
    outcomes: dict[str, int] = {}
    for row in ledgers[-1]["verimut"].values():
        outcomes[row["outcome"]] = outcomes.get(row["outcome"], 0) + 1
    counts = {
        "controls": sum(c.is_control for c in se_m.cells),
        "side_effect": sum(not c.is_control for c in se_m.cells),
        "oos": sum(c.family == "extra-oos" for c in se_m.cells),
        "extra": sum(c.family == "extra" for c in se_m.cells),
        "fault_cells_with_run": n_fault,
        "outcomes": dict(sorted(outcomes.items())),
        "identical": not any("ledgers" in w for w in warnings),
        "cli_cells": runs[-1]["cli"]["cells"] if not args.no_cli else None,
        "source": source,
        "benchmark_version": bench.version,
        "agentdojo": info["agentdojo"],
    }
    report = {"args": vars(args) | {"json": str(args.json)}, "warnings": warnings}
    report |= {"counts": counts, "figures": fig, "runs": runs}
    print(f"side-effect cells' outcomes: {counts['outcomes']}\n")
    h.finish(*table(fig, counts, args), info, args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
