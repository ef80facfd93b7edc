"""Benchmark: what a WebArena-Verified cell costs through verimut, against a bare loop of `evaluate_task` calls on
the same evidence.

Run from the repository root (WebArena-Verified's environment installed: scripts/install-webarena-verified.sh):

    .venv/bin/python bench/bench_webarena.py                  # the default families over every task, 3 repeats
    .venv/bin/python bench/bench_webarena.py --suite gitlab --repeat 5

Set-up, outside every timer: the manifest of the default families is built once (through the worker), and its
cells with a run of their own are kept.

Each repeat then measures, in alternating order (forward on even repeats, backward on odd ones):

- `verimut`: those cells through `pipeline.score_all` into a fresh directory, as `verimut audit` scores them, in
  one process: over the worker seam (JSON lines to the worker in WebArena-Verified's interpreter), `reset` (or a
  fork of the kept reference end), every request, the end state read as site changes, the evaluator, the diff,
  classification, the fsync'd ledger;
- `bare`: the same cells in WebArena-Verified's interpreter with no verimut around them (bench/webarena_bare.py):
  each cell's requests as a HAR trace and one `evaluate_task`. Its own timer, started after the package is up.

The ratio is taken inside each repeat (the machine is shared); the report gives its min and median and the
milliseconds per cell. The two loops' verdicts are compared; a difference is printed as a WARNING. stdout gets a
markdown table; every figure goes to the JSON file (default bench/out/webarena-latest.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from verimut import adapters
from verimut.adapters.webarena import python as webarena_python
from verimut.core.records import Cell
from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_alternatives import only, score

DEFAULT_JSON = HERE / "out" / "webarena-latest.json"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--suite", action="append", metavar="SITE", help="a site's tasks (repeatable; default: all)")
    p.add_argument("--repeat", type=int, default=3, metavar="N", help="measure N times (default 3)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH", help="where to write every figure")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    return args


def evidence(cell: Cell) -> dict[str, Any]:
    """A cell's run as the evidence it leaves: its requests, and its last response (the bare loop's input)."""
    assert cell.run is not None
    requests = [{"method": a.name, **a.args} for a in cell.run.actions if a.name != "respond"]
    said = [a.args.get("response") for a in cell.run.actions if a.name == "respond"]
    return {"cell": cell.cell_id, "task": cell.task, "requests": requests, "response": said[-1] if said else None}


def bare(cells: Sequence[Cell]) -> tuple[float, dict[str, bool | None]]:
    payload = {"cells": [evidence(c) for c in cells if c.run is not None]}
    done = subprocess.run(
        [str(webarena_python()), str(HERE / "webarena_bare.py")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return float(out["seconds"]), dict(out["verdicts"])


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    info = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "loadavg_start": list(os.getloadavg()),
    }
    bench = adapters.load("webarena-verified")
    tasks = [t for t in bench.tasks() if args.suite is None or t.split("/")[0] in args.suite]
    if not tasks:
        print(f"no WebArena-Verified site named {', '.join(args.suite or [])}", file=sys.stderr)
        return 2
    print(f"set-up: the manifest of {len(tasks)} tasks ...", file=sys.stderr, flush=True)
    m = manifest_mod.build(bench, tasks, pipeline.select_families(grammar=bench.grammar))
    kept = [c for c in m.cells if c.run is not None and c.same_run_as is None]
    kept_m = only(m, kept)
    families = Counter(c.family for c in kept)
    _, expected = bare(kept)  # warm-up, and the bare loop's verdicts

    runs: list[dict[str, float]] = []
    disagree: set[str] = set()
    order = ["verimut", "bare"]
    for i in range(args.repeat):
        r: dict[str, float] = {}
        for name in order if i % 2 == 0 else order[::-1]:
            print(f"[repeat {i + 1}/{args.repeat}] {name} ...", file=sys.stderr, flush=True)
            if name == "bare":
                r[name], verdicts = bare(kept)
                disagree |= {c for c, v in verdicts.items() if v != expected[c]}
            else:
                began = time.perf_counter()
                _, rows = score(bench, kept_m)
                r["verimut_wall"] = time.perf_counter() - began
                r[name] = r["verimut_wall"]
                disagree |= {c for c, row in rows.items() if row.verdict is not None and row.verdict != expected[c]}
        r["ratio"] = r["verimut"] / r["bare"]
        runs.append(r)
    info["loadavg_end"] = list(os.getloadavg())
    for c in sorted(disagree):
        print(f"WARNING: {c}: verimut's verdict is not the bare loop's", file=sys.stderr)

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    n = len(kept)
    fig: dict[str, Any] = {
        "tasks": len(tasks),
        "cells": n,
        "cells_by_family": dict(sorted(families.items())),
        "verimut_s": med("verimut"),
        "bare_s": med("bare"),
        "per_cell_ms": 1000 * med("verimut") / n,
        "per_cell_bare_ms": 1000 * med("bare") / n,
        "ratio_min": min(r["ratio"] for r in runs),
        "ratio_median": med("ratio"),
        "verdicts_disagreeing": sorted(disagree),
    }
    rows_md = [
        ("tasks", str(len(tasks))),
        ("cells with a run of their own", f"{n}: " + ", ".join(f"{f} {k}" for f, k in sorted(families.items()))),
        (
            "through `score_all` (worker seam, snapshots, diff, ledger), median (s)",
            f"{fig['verimut_s']:.1f} ({fig['per_cell_ms']:.0f} ms a cell)",
        ),
        (
            "bare loop in WebArena-Verified's interpreter (HAR entries, evaluate_task), median (s)",
            f"{fig['bare_s']:.1f} ({fig['per_cell_bare_ms']:.0f} ms a cell)",
        ),
        ("**verimut / bare**, min / median", f"**{fig['ratio_min']:.2f}x / {fig['ratio_median']:.2f}x**"),
        ("verdicts that differ from the bare loop's", str(len(disagree))),
    ]
    head = (
        f"WebArena-Verified ({bench.version}); {args.repeat} repeats; Python {info['python']}, {info['cpu_count']} CPUs, "
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
