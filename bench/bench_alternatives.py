"""Benchmark: what alternative runs and the repair's regrade cost through verimut, against bare loops.

Run from the repository root:

    .venv/bin/python bench/bench_alternatives.py                      # all four AgentDojo suites, 3 repeats
    .venv/bin/python bench/bench_alternatives.py --suite banking --repeat 5

Everything runs in one process, on one AgentDojo adapter object, after each suite's default
environment has been loaded once. Set-up, outside every timer: the default audit's manifest is
built once; the audit is scored once (`audit.score_all`, in process) and `verimut repair`'s
checks synthesized and written once, so the regrade has its module.

Each repeat then measures, in alternating order (forward on even repeats, backward on odd ones),
each after a `gc.collect()`:

- `alternatives`: the alternative-run cells (and every control) through `audit.score_all` into a
  fresh directory: replay, the oracle's check (end state and reads, `alternatives.differs`), the
  verifier, classification, the fsync'd ledger.
- `alternatives_bare`: the same cells with nothing around them: `reset`, `execute` of every action,
  `snapshot`, `verify`. No diff, no read comparison, no ledger.
- `regrade`: `repair.regrade` over every graded cell of the audit (faults, side effects,
  alternatives): replay, the repaired verifier (the original verdict AND the task's checks), the
  comparison with the reference by the audit's own rule.
- `regrade_bare`: the same cells: `reset`, `execute`, `snapshot`, `verify` (the original
  verifier only).

The ratios `alternatives / alternatives_bare` and `regrade / regrade_bare` are taken inside each
repeat (the machine is shared and noisy); the report gives their min and median. stdout gets a
markdown table; every figure goes to the JSON file (default bench/out/alternatives-latest.json).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

import verimut.repair as repair  # noqa: PLR0402  (the package; `verimut.repair.repair` the attribute is the API function)
from verimut import adapters
from verimut.core.benchmark import Adapter
from verimut.core.records import Cell, CellResult, Manifest
from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline
from verimut.engine.store import Store
from verimut.executors.inprocess import InProcess
from verimut.grammar.faults import spec_of

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_agentdojo import SUITES, machine

DEFAULT_JSON = HERE / "out" / "alternatives-latest.json"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--suite", action="append", choices=SUITES, help="an AgentDojo suite (repeatable; default: all)")
    p.add_argument("--repeat", type=int, default=3, metavar="N", help="measure N times (default 3)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH", help="where to write every figure")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    args.suite = list(dict.fromkeys(args.suite or SUITES))
    return args


def only(m: Manifest, keep: Sequence[Cell]) -> Manifest:
    m = msgspec.structs.replace(m, cells=list(keep))
    return msgspec.structs.replace(m, content_hash=manifest_mod.content_hash(m))


def score(bench: Adapter, m: Manifest) -> tuple[float, dict[str, CellResult]]:
    with tempfile.TemporaryDirectory(prefix="verimut-bench-alt-") as tmp:
        store = Store(Path(tmp))
        store.write_manifest(m)  # outside the timer, as `prepare` leaves the directory
        began = time.perf_counter()
        rows = pipeline.score_all(bench, m, store, InProcess())
        return time.perf_counter() - began, dict(rows)


def bare(bench: Adapter, cells: Sequence[Cell]) -> float:
    reset, execute, snapshot, verify = bench.reset, bench.execute, bench.snapshot, bench.verify
    began = time.perf_counter()
    for cell in cells:
        assert cell.run is not None
        ep = reset(cell.task)
        snapshot(ep)
        for a in cell.run.actions:
            if execute(ep, a).error is not None:
                break
        snapshot(ep)
        try:
            verify(ep, cell.run)
        except Exception:  # noqa: BLE001, S110 - the verifier is the benchmark's code; its error is a verdict too
            pass
    return time.perf_counter() - began


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    info = machine() | {"loadavg_start": list(os.getloadavg())}
    bench = adapters.load("agentdojo")
    tasks = pipeline.select_tasks(bench.tasks(), args.suite)
    print("set-up: the manifest, one scoring, the repair's checks ...", file=sys.stderr, flush=True)
    m = manifest_mod.build(bench, tasks, pipeline.select_families())
    alt_m = only(m, [c for c in m.cells if c.run is not None and (c.is_control or spec_of(c.family).is_alternative)])
    _, rows = score(bench, m)
    with tempfile.TemporaryDirectory(prefix="verimut-bench-alt-repair-") as tmp:
        store = Store(Path(tmp))
        store.write_manifest(m)
        module = repair.load_module(Path(repair.run(bench, m, rows, store).module))  # synthesis and a first regrade
        checks = module.CHECKS  # the checks as data: the regrade grades with them, in this process (as before)
        graded = [c for c in m.cells if c.run is not None and (r := rows.get(c.cell_id)) and r.verdict is not None]

        runs: list[dict[str, Any]] = []
        forward = ["alternatives", "alternatives_bare", "regrade", "regrade_bare"]
        for i in range(args.repeat):
            r: dict[str, Any] = {}
            for name in forward if i % 2 == 0 else forward[::-1]:
                print(f"[repeat {i + 1}/{args.repeat}] {name} ...", file=sys.stderr, flush=True)
                gc.collect()
                if name == "alternatives":
                    r[name], _ = score(bench, alt_m)
                elif name == "alternatives_bare":
                    r[name] = bare(bench, alt_m.cells)
                elif name == "regrade":
                    began = time.perf_counter()
                    repair.regrade(bench, m, rows, checks, InProcess())
                    r[name] = time.perf_counter() - began
                else:
                    r[name] = bare(bench, graded)
            r["ratio_alternatives"] = r["alternatives"] / r["alternatives_bare"]
            r["ratio_regrade"] = r["regrade"] / r["regrade_bare"]
            runs.append(r)
    info["loadavg_end"] = list(os.getloadavg())

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    n_alt = sum(spec_of(c.family).is_alternative for c in alt_m.cells)
    fig = {
        "alternative_cells": n_alt,
        "controls": len(alt_m.cells) - n_alt,
        "regraded_cells": len(graded),
        "alternatives_s": med("alternatives"),
        "alternatives_bare_s": med("alternatives_bare"),
        "ratio_alternatives_min": min(r["ratio_alternatives"] for r in runs),
        "ratio_alternatives_median": med("ratio_alternatives"),
        "regrade_s": med("regrade"),
        "regrade_bare_s": med("regrade_bare"),
        "ratio_regrade_min": min(r["ratio_regrade"] for r in runs),
        "ratio_regrade_median": med("ratio_regrade"),
    }
    rows_md = [
        ("alternative cells + controls", f"{fig['alternative_cells']} + {fig['controls']}"),
        ("alternatives through `score_all`, median (s)", f"{fig['alternatives_s']:.2f}"),
        (
            "the same cells, bare loop (reset, execute, snapshot, verify), median (s)",
            f"{fig['alternatives_bare_s']:.2f}",
        ),
        (
            "**alternatives / bare**, min / median",
            f"**{fig['ratio_alternatives_min']:.2f}x / {fig['ratio_alternatives_median']:.2f}x**",
        ),
        ("cells regraded by `repair.regrade`", f"{fig['regraded_cells']}"),
        ("regrade with the repaired verifiers, median (s)", f"{fig['regrade_s']:.2f}"),
        ("the same cells, bare loop with the original verifier, median (s)", f"{fig['regrade_bare_s']:.2f}"),
        (
            "**regrade / bare**, min / median",
            f"**{fig['ratio_regrade_min']:.2f}x / {fig['ratio_regrade_median']:.2f}x**",
        ),
    ]
    head = (
        f"AgentDojo {bench.version} (agentdojo {info['agentdojo']}), suites: {', '.join(args.suite)}; "
        f"{args.repeat} repeats; Python {info['python']}, {info['cpu_count']} CPUs, "
        f"load average {' '.join(f'{x:.1f}' for x in info['loadavg_start'])}"
    )
    print("\n".join([head, "", "| measure | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows_md)]))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    report = {"machine": info, "args": vars(args) | {"json": str(args.json)}, "figures": fig, "runs": runs}
    args.json.write_bytes(msgspec.json.format(msgspec.json.encode(report)))
    print(f"\n(all figures: {args.json})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
