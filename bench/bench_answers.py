"""Benchmark: what the answer families cost per cell through verimut, against a bare loop of the same verifier calls.

Run from the repository root:

    .venv/bin/python bench/bench_answers.py                      # all four AgentDojo suites, 5 repeats
    .venv/bin/python bench/bench_answers.py --suite travel --repeat 3

Everything runs in one process, on one AgentDojo adapter object. Set-up, outside every timer: the default
audit's manifest is built once, and its answer cells (answer-drop, answer-wrong, answer-superstring,
answer-hedge, null-run, alt-answer: every one with a run of its own) and every control are kept; the suites'
default environments are loaded by one warm-up pass of the bare loop.

Each repeat then measures, in alternating order (forward on even repeats, backward on odd ones), each after a
`gc.collect()`:

- `answers`: those cells through `pipeline.score_all` into a fresh directory, as `verimut audit` scores them in
  process: replay (an answer cell keeps the reference's actions, so it forks the reference's kept end and
  executes nothing; the null run starts from `reset`), the oracle's check (the end state, and the answer's by
  construction, `answers.confirm`), the verifier, classification, the fsync'd ledger;
- `answers_replayed`: the same with fork-state scoring off (the adapter with `fork=None`): every cell replayed
  from `reset`, as the bare loop does, so `answers_replayed / bare` is the pipeline's own overhead (snapshots,
  diff, the answer check, classification, ledger) with no saving from forks;
- `bare`: the same cells with no verimut around them, on the AgentDojo adapter itself (not the guarded
  `Adapter`): `reset`, `execute` of every action, then AgentDojo's verifier (`verify`: the task's `utility`, or
  `security` for an injection task). No snapshot, no diff, no answer check, no ledger.

The ratios are taken inside each repeat (the machine is shared and noisy); the report gives their min and
median, and the milliseconds per cell. The bare loop's verdicts are compared with the ledger's; a difference is
printed as a WARNING. stdout gets a markdown table; every figure goes to the JSON file (default
bench/out/answers-latest.json).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from verimut import adapters
from verimut.core.records import Cell
from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline
from verimut.grammar.faults import spec_of

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_agentdojo import SUITES, machine
from bench_alternatives import only, score

DEFAULT_JSON = HERE / "out" / "answers-latest.json"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--suite", action="append", choices=SUITES, help="an AgentDojo suite (repeatable; default: all)")
    p.add_argument("--repeat", type=int, default=5, metavar="N", help="measure N times (default 5)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH", help="where to write every figure")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    args.suite = list(dict.fromkeys(args.suite or SUITES))
    return args


def is_answer_cell(family: str) -> bool:
    spec = spec_of(family)
    return spec.needs_answer_channel or spec.null_run


def bare(agentdojo: Any, cells: Sequence[Cell]) -> tuple[float, dict[str, bool | None]]:
    """Each cell's run replayed from `reset` and graded by AgentDojo's verifier: the seconds, and each verdict."""
    reset, execute, verify = agentdojo.reset, agentdojo.execute, agentdojo.verify
    verdicts: dict[str, bool | None] = {}
    began = time.perf_counter()
    for cell in cells:
        assert cell.run is not None
        ep = reset(cell.task)
        for a in cell.run.actions:
            if execute(ep, a).error is not None:
                break
        try:
            verdicts[cell.cell_id] = verify(ep, cell.run).passed
        except Exception:  # noqa: BLE001 - the verifier is the benchmark's code; its error is a verdict too
            verdicts[cell.cell_id] = None
    return time.perf_counter() - began, verdicts


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    info = machine() | {"loadavg_start": list(os.getloadavg())}
    bench = adapters.load("agentdojo")
    no_fork = dataclasses.replace(bench, fork=None)
    tasks = pipeline.select_tasks(bench.tasks(), args.suite)
    print("set-up: the manifest ...", file=sys.stderr, flush=True)
    m = manifest_mod.build(bench, tasks, pipeline.select_families())
    kept = [
        c for c in m.cells if c.run is not None and c.same_run_as is None and (c.is_control or is_answer_cell(c.family))
    ]
    answer_m = only(m, kept)
    families = Counter(c.family for c in kept)
    _, expected = bare(bench.bench, kept)  # warm-up: every suite's default environment loaded, outside the timers

    runs: list[dict[str, Any]] = []
    disagree: set[str] = set()
    forward = ["answers", "answers_replayed", "bare"]
    for i in range(args.repeat):
        r: dict[str, Any] = {}
        for name in forward if i % 2 == 0 else forward[::-1]:
            print(f"[repeat {i + 1}/{args.repeat}] {name} ...", file=sys.stderr, flush=True)
            gc.collect()
            if name == "bare":
                r[name], verdicts = bare(bench.bench, kept)
                disagree |= {c for c, v in verdicts.items() if v != expected[c]}
            else:
                r[name], rows = score(bench if name == "answers" else no_fork, answer_m)
                disagree |= {c for c, row in rows.items() if row.verdict is not None and row.verdict != expected[c]}
        r["ratio"] = r["answers"] / r["bare"]
        r["ratio_replayed"] = r["answers_replayed"] / r["bare"]
        runs.append(r)
    info["loadavg_end"] = list(os.getloadavg())
    for c in sorted(disagree):
        print(f"WARNING: {c}: the ledger's verdict is not the bare loop's", file=sys.stderr)

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    cells = len(kept)
    n_answer = sum(n for f, n in families.items() if is_answer_cell(f))
    fig = {
        "answer_cells": n_answer,
        "controls": cells - n_answer,
        "cells_by_family": dict(sorted(families.items())),
        "answers_s": med("answers"),
        "answers_replayed_s": med("answers_replayed"),
        "bare_s": med("bare"),
        "per_cell_ms": 1000 * med("answers") / cells,
        "per_cell_replayed_ms": 1000 * med("answers_replayed") / cells,
        "per_cell_bare_ms": 1000 * med("bare") / cells,
        "ratio_min": min(r["ratio"] for r in runs),
        "ratio_median": med("ratio"),
        "ratio_replayed_min": min(r["ratio_replayed"] for r in runs),
        "ratio_replayed_median": med("ratio_replayed"),
        "verdicts_disagreeing": sorted(disagree),
    }
    by_family = ", ".join(f"{f} {n}" for f, n in sorted(families.items()))
    rows_md = [
        ("cells (controls included)", f"{cells}: {by_family}"),
        ("through `score_all`, median (s)", f"{fig['answers_s']:.2f} ({fig['per_cell_ms']:.2f} ms a cell)"),
        (
            "through `score_all`, forks off (every cell from `reset`), median (s)",
            f"{fig['answers_replayed_s']:.2f} ({fig['per_cell_replayed_ms']:.2f} ms a cell)",
        ),
        (
            "the same cells, bare loop (reset, execute, AgentDojo's verifier), median (s)",
            f"{fig['bare_s']:.2f} ({fig['per_cell_bare_ms']:.2f} ms a cell)",
        ),
        ("**answers / bare**, min / median", f"**{fig['ratio_min']:.2f}x / {fig['ratio_median']:.2f}x**"),
        (
            "forks off / bare, min / median",
            f"{fig['ratio_replayed_min']:.2f}x / {fig['ratio_replayed_median']:.2f}x",
        ),
        ("verdicts that differ from the bare loop's", str(len(disagree))),
    ]
    head = (
        f"AgentDojo {bench.version} (agentdojo {info['agentdojo']}), suites: {', '.join(args.suite)}; "
        f"{args.repeat} repeats; Python {info['python']}, {info['cpu_count']} CPUs, "
        f"load average {' '.join(f'{x:.1f}' for x in info['loadavg_start'])} at the start, "
        f"{' '.join(f'{x:.1f}' for x in info['loadavg_end'])} at the end"
    )
    print("\n".join([head, "", "| measure | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows_md)]))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    report = {"machine": info, "args": vars(args) | {"json": str(args.json)}, "figures": fig, "runs": runs}
    args.json.write_bytes(msgspec.json.format(msgspec.json.encode(report)))
    print(f"\n(all figures: {args.json})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
