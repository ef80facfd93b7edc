"""Benchmark: what a MiniWoB++ cell costs through verimut, against a bare loop of the same browser actions and
reward reads.

Run from the repository root (CUBE's environment installed: scripts/install-cube.sh):

    .venv/bin/python bench/bench_miniwob.py                 # the default families over every task, 3 repeats
    .venv/bin/python bench/bench_miniwob.py --task click-checkboxes --task enter-text --repeat 5

Set-up, outside every timer: the manifest of the default families is built once (verimut's side, through the
worker), and its cells with a run of their own are kept.

Each repeat then measures, in alternating order (forward on even repeats, backward on odd ones):

- `verimut`: those cells through `pipeline.score_all` into a fresh directory, as `verimut audit` scores them:
  over the worker seam (JSON lines to the worker in CUBE's interpreter), `reset`, the start state read by
  verimut's page reader, every action, the end state, the reward (`Task.evaluate()`), the diff, classification,
  the fsync'd ledger;
- `bare`: the same cells in CUBE's interpreter with no verimut around them (bench/miniwob_bare.py): `reset`,
  every action through the cube's tool, the reward. Its own timer, started after the browser is up.

The ratio is taken inside each repeat (the machine is shared); the report gives its min and median and the
milliseconds per cell. The two loops' verdicts are compared; a difference is printed as a WARNING. stdout gets a
markdown table; every figure goes to the JSON file (default bench/out/miniwob-latest.json).
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
from verimut.adapters.cube import python as cube_python
from verimut.core.records import Cell
from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_alternatives import only, score

DEFAULT_JSON = HERE / "out" / "miniwob-latest.json"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--task", action="append", metavar="NAME", help="a MiniWoB++ task (repeatable; default: all)")
    p.add_argument("--repeat", type=int, default=3, metavar="N", help="measure N times (default 3)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH", help="where to write every figure")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    return args


def bare(cells: Sequence[Cell]) -> tuple[float, dict[str, bool | None]]:
    payload = {
        "cells": [
            {"cell": c.cell_id, "task": c.task, "actions": [msgspec.to_builtins(a) for a in c.run.actions]}
            for c in cells
            if c.run is not None
        ]
    }
    done = subprocess.run(
        [str(cube_python()), str(HERE / "miniwob_bare.py")],
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
    bench = adapters.load("miniwob")
    tasks = [t for t in bench.tasks() if args.task is None or t.split("/")[0] in args.task]
    if not tasks:
        print(f"no MiniWoB++ task named {', '.join(args.task or [])}", file=sys.stderr)
        return 2
    print(f"set-up: the manifest of {len(tasks)} tasks ...", file=sys.stderr, flush=True)
    m = manifest_mod.build(bench, tasks, pipeline.select_families())
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
        ("tasks (MiniWoB++ task x seed)", str(len(tasks))),
        ("cells with a run of their own", f"{n}: " + ", ".join(f"{f} {k}" for f, k in sorted(families.items()))),
        (
            "through `score_all` (worker seam, snapshots, diff, ledger), median (s)",
            f"{fig['verimut_s']:.1f} ({fig['per_cell_ms']:.0f} ms a cell)",
        ),
        (
            "bare loop in CUBE's interpreter (reset, actions, Task.evaluate()), median (s)",
            f"{fig['bare_s']:.1f} ({fig['per_cell_bare_ms']:.0f} ms a cell)",
        ),
        ("**verimut / bare**, min / median", f"**{fig['ratio_min']:.2f}x / {fig['ratio_median']:.2f}x**"),
        ("verdicts that differ from the bare loop's", str(len(disagree))),
    ]
    head = (
        f"MiniWoB++ ({bench.version}); {args.repeat} repeats; Python {info['python']}, {info['cpu_count']} CPUs, "
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
