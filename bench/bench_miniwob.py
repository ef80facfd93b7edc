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

import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec

from verimut import adapters
from verimut.adapters.cube import python as cube_python
from verimut.core.records import Cell
from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h

DEFAULT_JSON = h.OUT / "miniwob-latest.json"


def bare(cells: Sequence[Cell]) -> h.Bare:
    payload = {
        "cells": [
            {"cell": c.cell_id, "task": c.task, "actions": [msgspec.to_builtins(a) for a in c.run.actions]}
            for c in cells
            if c.run is not None
        ]
    }
    return h.bare_elsewhere(cube_python(), h.HERE / "miniwob_bare.py", payload)


def main(argv: Sequence[str] | None = None) -> int:
    def more(p: object) -> None:
        p.add_argument("--task", action="append", metavar="NAME", help="a MiniWoB++ task (repeatable; default: all)")  # type: ignore[attr-defined]

    args = h.arguments(__doc__ or "", DEFAULT_JSON, argv, repeat=3, suites=False, more=more)
    info = h.machine()
    bench = adapters.load("miniwob")
    tasks = [t for t in bench.tasks() if args.task is None or t.split("/")[0] in args.task]
    if not tasks:
        print(f"no MiniWoB++ task named {', '.join(args.task or [])}", file=sys.stderr)
        return 2
    print(f"set-up: the manifest of {len(tasks)} tasks ...", file=sys.stderr, flush=True)
    m = manifest_mod.build(bench, tasks, pipeline.select_families())
    h.versus_worker_bare(
        bench, m, bare, args, info, "MiniWoB++", "bare loop in CUBE's interpreter (reset, actions, Task.evaluate())"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
