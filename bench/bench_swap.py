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
- `fault_off`: the same, with reuse turned off. For this measurement only (restored in a
  `finally`), the scorer's Replayer is a subclass (`FromReset`) whose `replay` replays every
  run afresh from `bench.reset` (the control and the runs that extend the reference included;
  the reference's kept end still serves the comparisons and the reads). Nothing in src/ is
  changed; the script checks that the Replayers built under it were these.

Per-cell figures divide by the number of fault cells that have a run (`c.run is not None`;
refused cells have none); the ratio is `fault_on / fault_off`. The two ledgers (cells.jsonl)
are compared row by row by cell_id, ignoring the `seconds` field, and a WARNING is printed if
they decide anything differently.

The figures reported are medians over the repeats. stdout gets a short markdown table;
every figure, each repeat's raw numbers, outcome counts and the machine facts go to the JSON
file (default bench/out/swap-latest.json next to this script). The arguments, the repeats, the bare loop
and the report are bench/harness.py's.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from verimut.core import replay as replay_mod
from verimut.core.records import Cell, Manifest
from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline
from verimut.engine import scorer as scorer_mod
from verimut.engine.store import Store
from verimut.executors.inprocess import InProcess

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h

DEFAULT_JSON = h.OUT / "swap-latest.json"


def outcome_counts(rows: dict[str, dict[str, Any]]) -> dict[str, int]:
    return dict(sorted(Counter(r["outcome"] for r in rows.values()).items()))


class FromReset(replay_mod.Replayer):
    """A Replayer that replays every run from `reset` (the reference's kept end still serves comparisons)."""

    built: list[FromReset] = []  # noqa: RUF012 - the instances made while `no_prefix_reuse` holds

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        FromReset.built.append(self)

    def replay(self, task: str, run: Any, in_place: bool = False) -> replay_mod.Replay:
        return replay_mod.replay(self.bench, task, run)


@contextmanager
def no_prefix_reuse() -> Iterator[list[Any]]:
    """Every Scorer built inside this block replays each run from reset (`FromReset`)."""
    original = scorer_mod.Replayer
    FromReset.built = []
    scorer_mod.Replayer = FromReset  # type: ignore[misc]
    try:
        yield FromReset.built
    finally:
        scorer_mod.Replayer = original  # type: ignore[misc]


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
        ledger = h.read_ledger(out)
    fig = {
        "build_s": t1 - t0,
        "score_s": t2 - t1,
        # Sum of the scorer's own per-cell timings; score_s minus this is the ledger and bookkeeping.
        "scorer_sum_s": sum(r.seconds for r in rows.values()),
    }
    return fig, ledger, m.content_hash


def measure_naive(bench: Any, cells: Sequence[Cell]) -> tuple[dict[str, Any], dict[str, bool | None]]:
    done = h.bare(bench, cells, as_run_task=True, snapshots=True)
    return {"total_s": done.seconds, "verify_errors": done.errors}, done.verdicts


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
            assert built, "the reuse-off wrapper did not take"  # the pipeline may build a Scorer per phase
        ledger = h.read_ledger(out)
    return {"total_s": total, "scorer_sum_s": sum(r.seconds for r in rows.values())}, ledger


# -- reporting -------------------------------------------------------------------------------


def table(fig: dict[str, Any], counts: dict[str, Any]) -> list[tuple[str, str]]:
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
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    args = h.arguments(__doc__ or "", DEFAULT_JSON, argv, repeat=1)
    info = h.machine("agentdojo", "pydantic")
    perf = time.perf_counter
    bench, loads = h.load_agentdojo(args.suite)

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

    swap_ledgers: list[dict[str, dict[str, Any]]] = []
    fault_ledgers: list[tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]] = []
    naive_verdicts: list[dict[str, bool | None]] = []
    verify_verdicts: list[dict[str, bool | None]] = []
    swap_hashes: set[str] = set()
    raised_runs: set[str] = set()

    def do_swap() -> dict[str, Any]:
        fig, ledger, h_ = measure_swap(bench, tasks)
        swap_ledgers.append(ledger)
        swap_hashes.add(h_)
        return fig

    def do_naive() -> dict[str, Any]:
        fig, v = measure_naive(bench, swap_cells)
        naive_verdicts.append(v)
        return fig

    def do_verify_only() -> dict[str, Any]:
        fig, v, raised = measure_verify_only(bench, swap_cells)
        verify_verdicts.append(v)
        raised_runs.update(raised)
        return fig

    fault_pending: dict[str, Any] = {}

    def do_fault(reuse: bool) -> Callable[[], dict[str, Any]]:
        def go() -> dict[str, Any]:
            key = "fault_on" if reuse else "fault_off"
            fig, ledger = measure_fault(bench, fault_m, reuse)
            fault_pending[key] = ledger
            if len(fault_pending) == 2:
                fault_ledgers.append((fault_pending.pop("fault_on"), fault_pending.pop("fault_off")))
            return fig

        return go

    runs = h.alternate(
        args.repeat,
        [
            ("swap", do_swap),
            ("naive", do_naive),
            ("verify_only", do_verify_only),
            ("fault_on", do_fault(True)),
            ("fault_off", do_fault(False)),
        ],
    )

    # -- consistency checks --------------------------------------------------------------------
    warnings: list[str] = []
    if swap_hashes != {swap_m.content_hash}:
        warnings.append("the swap manifest written by `prepare` differs from the one built once")
    swap_ledger = swap_ledgers[-1]
    if any(h.differences(swap_ledgers[0], other) for other in swap_ledgers[1:]):
        warnings.append("the swap ledgers differ between repeats")
    fault_diffs = sorted({cid for on, off in fault_ledgers for cid in h.differences(on, off)})
    fault_across = any(h.differences(fault_ledgers[0][0], on) for on, _ in fault_ledgers[1:])
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
        **loads,
        "swap_manifest_once_s": swap_manifest_once_s,
        "fault_manifest_once_s": fault_manifest_once_s,
        "swap_build_s": h.median(runs, "swap", "build_s"),
        "swap_scoring_s": h.median(runs, "swap", "score_s"),
        "swap_scorer_sum_s": h.median(runs, "swap", "scorer_sum_s"),
        "naive_s": h.median(runs, "naive", "total_s"),
        "verify_only_s": h.median(runs, "verify_only", "verify_s"),
        "verify_only_setup_s": h.median(runs, "verify_only", "setup_s"),
        "fault_on_s": h.median(runs, "fault_on", "total_s"),
        "fault_off_s": h.median(runs, "fault_off", "total_s"),
    }
    fig["swap_scoring_per_cell_s"] = fig["swap_scoring_s"] / n_swap
    fig["naive_per_cell_s"] = fig["naive_s"] / n_swap
    fig["verify_only_per_cell_s"] = fig["verify_only_s"] / n_swap
    # Ratios inside each repeat, their median (the harness's rule).
    fig["ratio_swap_naive"] = h.ratios(runs, ["swap", "score_s"], ["naive", "total_s"])["median"]
    fig["ratio_swap_verify"] = h.ratios(runs, ["swap", "score_s"], ["verify_only", "verify_s"])["median"]
    fig["swap_ledger_and_bookkeeping_s"] = fig["swap_scoring_s"] - fig["swap_scorer_sum_s"]
    fig["fault_on_per_cell_s"] = fig["fault_on_s"] / fault_with_run
    fig["fault_off_per_cell_s"] = fig["fault_off_s"] / fault_with_run
    fig["ratio_fault_on_off"] = h.ratios(runs, ["fault_on", "total_s"], ["fault_off", "total_s"])["median"]

    report = {
        "args": {"suites": args.suite, "repeat": args.repeat},
        "swap_manifest_hash": swap_m.content_hash,
        "fault_manifest_hash": fault_m.content_hash,
        "warnings": warnings,
        "counts": counts,
        "median": fig,
        "runs": runs,
    }
    h.finish(h.agentdojo_head(bench, info, args), table(fig, counts), info, args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
