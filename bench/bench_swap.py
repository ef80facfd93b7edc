"""Benchmark: what verimut's intent-swap census costs against naive replay, and what prefix reuse saves.

Run from the repository root:

    .venv/bin/python bench/bench_swap.py                      # all four suites, once
    .venv/bin/python bench/bench_swap.py --suite banking      # one suite (repeatable)
    .venv/bin/python bench/bench_swap.py --repeat 3 --json /tmp/s.json

Everything runs in one process, on one AgentDojo adapter object, after each chosen suite's
default environment has been loaded once (`bench.reset` of one task per suite, timed apart
as `env_load_s`). The tasks are the chosen suites' (`audit.select_tasks`). Two manifests are
built once, before any measurement (their build times are reported once, as
`swap_manifest_once_s` and `fault_manifest_once_s`):

- the swap manifest, `manifest.build(bench, tasks, (), arm="swap")`: every ordered pair
  (i, j) of tasks within a suite. A swap cell replays task j's reference run from j's
  clean start (`cell.run_task` = j) and grades it with task i's verifier (`cell.task` = i);
  the diagonal cells are the controls (family "control", run_task == task);
- the fault manifest, `manifest.build(bench, tasks, audit.select_families())`, written to a
  temporary directory and read back once (as `audit.prepare` does, so that the scorer sees
  the same data a real audit does).

Each repeat then runs these five measurements, in alternating order (forward on even
repeats, backward on odd ones, so that drift on a noisy machine does not always favour the
same measurement); each starts with a `gc.collect()`:

A. The intent-swap census (verimut's "swap" arm), over all the swap manifest's cells:

- `swap`: verimut's real path into a fresh temporary directory. `audit.prepare(bench, out,
  tasks, (), ..., "swap")` builds, writes and reads back the manifest (timed as
  `build_s`, reported as `swap_build_s`); then `audit.score_all(bench, m, out,
  executor.InProcess())` (timed as `score_s`, reported as `swap_scoring_s`): controls
  first, then the swap cells, grouped by run. The Scorer's Replayer replays each run j once
  from reset, keeps its end, and hands each cell a fork of that end (all cells share
  one end snapshot); each cell's end state is diffed against its start (the oracle's effect
  check) and graded by verifier i (`verify_as`); every row goes to the fsync'd ledger. A
  cell whose own task's or run task's control did not pass is recorded unscorable (no
  replay, no verifier), and a cell whose run raised is recorded incomplete without calling
  the verifier; both counts are reported.
- `naive`: for exactly the same cells, a plain loop with no reuse: per cell
  `ep = bench.reset(cell.run_task)`, `bench.snapshot(ep)`, `bench.execute(ep, a)` for every
  action of `cell.run`, `bench.snapshot(ep)`, `bench.verify_as(cell.task, ep, cell.run)`.
  No ledger, no diff, no forks; every cell's verifier is called.
- `verify_only`: the cost floor. Outside the timer, each run task j's run is replayed once
  (reset, every action) and, per cell, that episode is forked (`bench.fork`); only the
  `bench.verify_as(cell.task, ep, cell.run)` calls are timed, and summed.

Per-cell figures divide by the number of swap cells that have a run (all of them); ratios
are `swap_scoring / naive` and `swap_scoring / verify_only`. The verdicts of `naive` and
`verify_only` are compared with each other and with the ledger's (where the scorer called
the verifier); disagreements are counted and warned about.

B. Prefix reuse in the fault arm, over the fault manifest (built once, see above):

- `fault_on`: `audit.score_all(bench, m, out, InProcess())` into a fresh temporary
  directory (holding the manifest, written outside the timer), as verimut runs it: the reference
  run of each task is replayed once and kept (its end state serves every cell's
  comparison; the control starts from a fork of it); every edited run is replayed from
  reset. (An earlier version also started edited runs from forked checkpoints of shared
  prefixes; this measurement showed that did not pay on AgentDojo, so it was dropped.)
- `fault_off`: the same, with prefix reuse turned off. The script wraps
  `verimut.core.replay.Replayer.__init__` for this measurement only (restored in a `finally`):
  the wrapper calls the original and then sets `self.forks = False`, so the Replayer falls
  back to a fresh `replay()` from `bench.reset` for every run (the reference end states
  included). Nothing in src/ is changed; the wrapper checks that exactly one Replayer was
  built under it.

Per-cell figures divide by the number of fault cells that have a run (`c.run is not None`;
refused cells have none); the ratio is `fault_on / fault_off`. The two ledgers (cells.jsonl)
are compared row by row by cell_id, ignoring the `seconds` field, and a WARNING is printed if
they decide anything differently.

The figures reported are medians over the repeats. stdout gets a short markdown table;
every figure, each repeat's raw numbers, outcome counts and the machine facts go to the JSON
file (default bench/out/swap-latest.json next to this script). Helpers (`machine`, `timed`,
`median_of`, `SUITES`) are imported from bench_agentdojo.py beside this script.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import msgspec

from verimut import adapters
from verimut.core import replay as replay_mod
from verimut.core.records import Cell, Manifest
from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline
from verimut.engine.store import Store
from verimut.executors.inprocess import InProcess

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_agentdojo import SUITES, machine, median_of, timed

DEFAULT_JSON = HERE / "out" / "swap-latest.json"


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


# -- helpers ---------------------------------------------------------------------------------


def read_ledger(out: Path) -> dict[str, dict[str, Any]]:
    """cells.jsonl as plain rows by cell_id, without the `seconds` field (timing, not outcome)."""
    rows: dict[str, dict[str, Any]] = {}
    for line in Store(out).ledger_path.read_bytes().splitlines():
        if line.strip():
            row = msgspec.json.decode(line)
            row.pop("seconds", None)
            rows[row["cell_id"]] = row
    return rows


def ledger_differences(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> list[str]:
    """Cell ids whose rows differ (or that only one ledger has)."""
    return sorted(cid for cid in a.keys() | b.keys() if a.get(cid) != b.get(cid))


def outcome_counts(rows: dict[str, dict[str, Any]]) -> dict[str, int]:
    return dict(sorted(Counter(r["outcome"] for r in rows.values()).items()))


@contextmanager
def no_prefix_reuse() -> Iterator[list[Any]]:
    """Every Replayer built inside this block replays each run from reset (forks = False)."""
    original = replay_mod.Replayer.__init__
    built: list[Any] = []

    def init(self: Any, *a: Any, **kw: Any) -> None:
        original(self, *a, **kw)
        self.forks = False
        built.append(self)

    replay_mod.Replayer.__init__ = init  # type: ignore[method-assign]
    try:
        yield built
    finally:
        replay_mod.Replayer.__init__ = original  # type: ignore[method-assign]


# -- the measurements ------------------------------------------------------------------------


def measure_swap(bench: Any, tasks: Sequence[str]) -> tuple[dict[str, Any], dict[str, dict[str, Any]], str]:
    perf = time.perf_counter
    with tempfile.TemporaryDirectory(prefix="verimut-bench-swap-") as tmp:
        out = Path(tmp)
        t0 = perf()
        m = pipeline.prepare(bench, Store(out), tasks, (), lambda _: None, "swap")
        t1 = perf()
        rows = pipeline.score_all(bench, m, Store(out), InProcess())
        t2 = perf()
        ledger = read_ledger(out)
    fig = {
        "build_s": t1 - t0,
        "score_s": t2 - t1,
        # Sum of the scorer's own per-cell timings; score_s minus this is the ledger and bookkeeping.
        "scorer_sum_s": sum(r.seconds for r in rows.values()),
    }
    return fig, ledger, m.content_hash


def measure_naive(bench: Any, cells: Sequence[Cell]) -> tuple[dict[str, Any], dict[str, bool | None]]:
    verdicts: dict[str, bool | None] = {}
    reset, execute, snapshot, verify_as = bench.reset, bench.execute, bench.snapshot, bench.verify_as
    perf = time.perf_counter
    began = perf()
    for cell in cells:
        ep = reset(cell.run_task)
        snapshot(ep)
        for a in cell.run.actions:
            execute(ep, a)
        snapshot(ep)
        try:
            verdicts[cell.cell_id] = verify_as(cell.task, ep, cell.run).passed
        except Exception:  # noqa: BLE001 - the verifier is the benchmark's code; an error is a verdict of None
            verdicts[cell.cell_id] = None
    total = perf() - began
    errors = sum(1 for v in verdicts.values() if v is None)
    return {"total_s": total, "verify_errors": errors}, verdicts


def measure_verify_only(bench: Any, cells: Sequence[Cell]) -> tuple[dict[str, Any], dict[str, bool | None], set[str]]:
    """Only the verify_as calls are timed; the replay (once per run task) and the forks are not."""
    perf = time.perf_counter
    bases: dict[str, Any] = {}
    raised: set[str] = set()  # run tasks whose run has an action that raises
    verdicts: dict[str, bool | None] = {}
    verify_s = 0.0
    setup_began = perf()
    setup_s = 0.0
    for cell in cells:
        j = cell.run_task
        s0 = perf()
        if j not in bases:
            ep = bench.reset(j)
            for a in cell.run.actions:
                if bench.execute(ep, a).error is not None:
                    raised.add(j)
            bases[j] = (ep, cell.run)
        base, run = bases[j]
        assert run == cell.run, f"{cell.cell_id}: cells of run task {j} carry different runs"
        ep = bench.fork(base)
        setup_s += perf() - s0
        v0 = perf()
        try:
            verdicts[cell.cell_id] = bench.verify_as(cell.task, ep, cell.run).passed
        except Exception:  # noqa: BLE001 - the verifier is the benchmark's code; an error is a verdict of None
            verdicts[cell.cell_id] = None
        verify_s += perf() - v0
    wall = perf() - setup_began
    errors = sum(1 for v in verdicts.values() if v is None)
    fig = {"verify_s": verify_s, "setup_s": setup_s, "wall_s": wall, "verify_errors": errors}
    return fig, verdicts, raised


def measure_fault(bench: Any, m: Manifest, reuse: bool) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    with tempfile.TemporaryDirectory(prefix=f"verimut-bench-fault-{'on' if reuse else 'off'}-") as tmp:
        out = Path(tmp)
        Store(out).write_manifest(m)  # outside the timer: as `prepare` leaves the directory
        with nullcontext([]) if reuse else no_prefix_reuse() as built:
            began = time.perf_counter()
            rows = pipeline.score_all(bench, m, Store(out), InProcess())
            total = time.perf_counter() - began
        if not reuse:
            assert len(built) == 1 and not built[0].forks, "the reuse-off wrapper did not take"
        ledger = read_ledger(out)
    return {"total_s": total, "scorer_sum_s": sum(r.seconds for r in rows.values())}, ledger


# -- reporting -------------------------------------------------------------------------------


def table(fig: dict[str, Any], counts: dict[str, Any], args: argparse.Namespace) -> str:
    def ms(s: float) -> str:
        return f"{1000 * s:.2f}"

    sw, fa = counts["swap"], counts["fault"]
    rows = [
        ("swap cells (all have a run; per-cell denominator)", f"{sw['with_run']}"),
        ("swap cells: unscorable / incomplete (no verifier call)", f"{sw['unscorable']} / {sw['incomplete']}"),
        ("swap manifest build, `prepare` (s)", f"{fig['swap_build_s']:.2f}"),
        ("swap scoring, `score_all` (s)", f"{fig['swap_scoring_s']:.2f}"),
        ("swap scoring per cell (ms)", ms(fig["swap_scoring_per_cell_s"])),
        ("naive replay per cell (ms)", ms(fig["naive_per_cell_s"])),
        ("verify_as only per cell (ms)", ms(fig["verify_only_per_cell_s"])),
        ("ratio swap scoring / naive", f"{fig['ratio_swap_naive']:.2f}x"),
        ("ratio swap scoring / verify-only", f"{fig['ratio_swap_verify']:.2f}x"),
        ("fault cells in manifest / with a run (per-cell denominator)", f"{fa['cells']} / {fa['with_run']}"),
        ("fault scoring, prefix reuse on (s)", f"{fig['fault_on_s']:.2f}"),
        ("fault scoring, prefix reuse off (s)", f"{fig['fault_off_s']:.2f}"),
        ("fault scoring per cell, reuse on (ms)", ms(fig["fault_on_per_cell_s"])),
        ("fault scoring per cell, reuse off (ms)", ms(fig["fault_off_per_cell_s"])),
        ("ratio reuse on / off", f"{fig['ratio_fault_on_off']:.2f}x"),
        ("fault ledgers on vs off identical (ignoring seconds)", "yes" if counts["fault_ledgers_identical"] else "NO"),
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
    info["loadavg_start"] = list(os.getloadavg())
    perf = time.perf_counter

    t0 = perf()
    bench = adapters.load("agentdojo")
    adapter_load_s = perf() - t0
    known = {t.split("/", 1)[0] for t in bench.tasks()}
    missing = [s for s in args.suite if s not in known]
    if missing:
        print(f"unknown suite(s) for AgentDojo {bench.version}: {', '.join(missing)}", file=sys.stderr)
        return 2
    # Load each suite's default environment once, outside every measurement.
    t0 = perf()
    first_task: dict[str, str] = {}
    for t in bench.tasks():
        first_task.setdefault(t.split("/", 1)[0], t)
    for s in args.suite:
        bench.reset(first_task[s])
    env_load_s = perf() - t0

    tasks = pipeline.select_tasks(bench.tasks(), args.suite)
    families = pipeline.select_families()
    print("building the swap and fault manifests once ...", file=sys.stderr, flush=True)
    t0 = perf()
    swap_m = manifest_mod.build(bench, tasks, (), arm="swap")
    swap_manifest_once_s = perf() - t0
    t0 = perf()
    fault_built = manifest_mod.build(bench, tasks, families)
    fault_manifest_once_s = perf() - t0
    with tempfile.TemporaryDirectory(prefix="verimut-bench-fault-manifest-") as tmp:
        Store(Path(tmp)).write_manifest(fault_built)
        fault_m = Store(Path(tmp)).read_manifest()  # work from what was written, as `prepare` does
    swap_cells = [c for c in swap_m.cells if c.run is not None]
    fault_with_run = sum(1 for c in fault_m.cells if c.run is not None)

    runs: list[dict[str, Any]] = []
    swap_ledgers: list[dict[str, dict[str, Any]]] = []
    fault_ledgers: list[tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]] = []
    naive_verdicts: list[dict[str, bool | None]] = []
    verify_verdicts: list[dict[str, bool | None]] = []
    swap_hashes: set[str] = set()
    raised_runs: set[str] = set()

    def do_swap(r: dict[str, Any]) -> None:
        r["swap"], ledger, h = timed(lambda: measure_swap(bench, tasks))
        swap_ledgers.append(ledger)
        swap_hashes.add(h)

    def do_naive(r: dict[str, Any]) -> None:
        r["naive"], v = timed(lambda: measure_naive(bench, swap_cells))
        naive_verdicts.append(v)

    def do_verify_only(r: dict[str, Any]) -> None:
        r["verify_only"], v, raised = timed(lambda: measure_verify_only(bench, swap_cells))
        verify_verdicts.append(v)
        raised_runs.update(raised)

    fault_pending: dict[str, Any] = {}

    def do_fault(reuse: bool) -> Callable[[dict[str, Any]], None]:
        def go(r: dict[str, Any]) -> None:
            key = "fault_on" if reuse else "fault_off"
            r[key], ledger = timed(lambda: measure_fault(bench, fault_m, reuse))
            fault_pending[key] = ledger
            if len(fault_pending) == 2:
                fault_ledgers.append((fault_pending.pop("fault_on"), fault_pending.pop("fault_off")))

        return go

    forward = [
        ("swap", do_swap),
        ("naive", do_naive),
        ("verify_only", do_verify_only),
        ("fault_on", do_fault(True)),
        ("fault_off", do_fault(False)),
    ]
    for i in range(args.repeat):
        order = forward if i % 2 == 0 else forward[::-1]
        r: dict[str, Any] = {"order": [name for name, _ in order]}
        for name, fn in order:
            print(f"[repeat {i + 1}/{args.repeat}] {name} ...", file=sys.stderr, flush=True)
            began = perf()
            fn(r)
            print(f"    {perf() - began:.1f} s", file=sys.stderr, flush=True)
        runs.append(r)
    info["loadavg_end"] = list(os.getloadavg())

    # -- consistency checks --------------------------------------------------------------------
    warnings: list[str] = []
    if swap_hashes != {swap_m.content_hash}:
        warnings.append("the swap manifest written by `prepare` differs from the one built once")
    swap_ledger = swap_ledgers[-1]
    if any(ledger_differences(swap_ledgers[0], other) for other in swap_ledgers[1:]):
        warnings.append("the swap ledgers differ between repeats")
    fault_diffs = sorted({cid for on, off in fault_ledgers for cid in ledger_differences(on, off)})
    fault_across = any(ledger_differences(fault_ledgers[0][0], on) for on, _ in fault_ledgers[1:])
    if fault_diffs:
        warnings.append(
            f"fault ledgers with reuse on and off differ in {len(fault_diffs)} cell(s), e.g. {fault_diffs[:3]}"
        )
    if fault_across:
        warnings.append("the fault ledgers (reuse on) differ between repeats")
    naive_vs_verify = sorted(
        cid for nv in naive_verdicts for vv in verify_verdicts for cid in nv if nv[cid] != vv.get(cid)
    )
    if naive_vs_verify:
        warnings.append(f"naive and verify-only verdicts differ in {len(set(naive_vs_verify))} cell(s)")
    called = {cid: row["verdict"] for cid, row in swap_ledger.items() if row["verdict"] is not None}
    scorer_vs_naive = sorted(cid for cid, v in called.items() if naive_verdicts[-1].get(cid) != v)
    if scorer_vs_naive:
        warnings.append(
            f"the ledger's verdicts and the naive loop's differ in {len(scorer_vs_naive)} cell(s), "
            f"e.g. {scorer_vs_naive[:3]}"
        )

    swap_outcomes = outcome_counts(swap_ledger)
    fault_on_ledger = fault_ledgers[-1][0]
    counts = {
        "tasks": len(tasks),
        "swap": {
            "cells": len(swap_m.cells),
            "with_run": len(swap_cells),
            "controls": sum(1 for c in swap_cells if c.is_control),
            "unscorable": sum(1 for r in swap_ledger.values() if r["unscorable"]),
            "incomplete": swap_outcomes.get("incomplete", 0),
            "verifier_called_by_scorer": len(called) + sum(1 for r in swap_ledger.values() if r["outcome"] == "error"),
            "run_tasks_with_raising_action": sorted(raised_runs),
            "actions_in_runs": sum(len(c.run.actions) for c in swap_cells),
            "naive_verify_errors": runs[-1]["naive"]["verify_errors"],
            "outcomes": swap_outcomes,
        },
        "fault": {
            "cells": len(fault_m.cells),
            "with_run": fault_with_run,
            "refused_no_run": len(fault_m.cells) - fault_with_run,
            "unscorable": sum(1 for r in fault_on_ledger.values() if r["unscorable"]),
            "outcomes": outcome_counts(fault_on_ledger),
        },
        "fault_ledgers_identical": not fault_diffs,
        "fault_ledger_differences": fault_diffs,
        "naive_vs_verify_only_differences": sorted(set(naive_vs_verify)),
        "ledger_vs_naive_verdict_differences": scorer_vs_naive,
        "benchmark_version": bench.version,
        "agentdojo": info["agentdojo"],
        "python": info["python"],
        "cpu_count": info["cpu_count"],
    }

    n_swap = len(swap_cells)
    fig: dict[str, Any] = {
        "adapter_load_s": adapter_load_s,
        "env_load_s": env_load_s,
        "swap_manifest_once_s": swap_manifest_once_s,
        "fault_manifest_once_s": fault_manifest_once_s,
        "swap_build_s": median_of(runs, "swap", "build_s"),
        "swap_scoring_s": median_of(runs, "swap", "score_s"),
        "swap_scorer_sum_s": median_of(runs, "swap", "scorer_sum_s"),
        "naive_s": median_of(runs, "naive", "total_s"),
        "verify_only_s": median_of(runs, "verify_only", "verify_s"),
        "verify_only_setup_s": median_of(runs, "verify_only", "setup_s"),
        "fault_on_s": median_of(runs, "fault_on", "total_s"),
        "fault_off_s": median_of(runs, "fault_off", "total_s"),
    }
    fig["swap_scoring_per_cell_s"] = fig["swap_scoring_s"] / n_swap
    fig["naive_per_cell_s"] = fig["naive_s"] / n_swap
    fig["verify_only_per_cell_s"] = fig["verify_only_s"] / n_swap
    fig["ratio_swap_naive"] = fig["swap_scoring_s"] / fig["naive_s"]
    fig["ratio_swap_verify"] = fig["swap_scoring_s"] / fig["verify_only_s"]
    fig["swap_ledger_and_bookkeeping_s"] = fig["swap_scoring_s"] - fig["swap_scorer_sum_s"]
    fig["fault_on_per_cell_s"] = fig["fault_on_s"] / fault_with_run
    fig["fault_off_per_cell_s"] = fig["fault_off_s"] / fault_with_run
    fig["ratio_fault_on_off"] = fig["fault_on_s"] / fig["fault_off_s"]

    report = {
        "machine": info,
        "args": {"suites": args.suite, "repeat": args.repeat},
        "swap_manifest_hash": swap_m.content_hash,
        "fault_manifest_hash": fault_m.content_hash,
        "warnings": warnings,
        "counts": counts,
        "median": fig,
        "runs": runs,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_bytes(msgspec.json.format(msgspec.json.encode(report)))

    print(table(fig, counts, args))
    for w in warnings:
        print(f"\nWARNING: {w} (see the JSON).")
    print(f"\n(all figures: {args.json})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
