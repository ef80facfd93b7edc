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

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verimut import adapters
from verimut.adapters.webarena import python as webarena_python
from verimut.core.records import Cell
from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h

DEFAULT_JSON = h.OUT / "webarena-latest.json"


def evidence(cell: Cell) -> dict[str, Any]:
    """A cell's run as the evidence it leaves: its requests, and its last response (the bare loop's input)."""
    assert cell.run is not None
    requests = [{"method": a.name, **a.args} for a in cell.run.actions if a.name != "respond"]
    said = [a.args.get("response") for a in cell.run.actions if a.name == "respond"]
    return {"cell": cell.cell_id, "task": cell.task, "requests": requests, "response": said[-1] if said else None}


def bare(cells: Sequence[Cell]) -> h.Bare:
    payload = {"cells": [evidence(c) for c in cells if c.run is not None]}
    return h.bare_elsewhere(webarena_python(), h.HERE / "webarena_bare.py", payload)


def main(argv: Sequence[str] | None = None) -> int:
    def more(p: object) -> None:
        p.add_argument("--suite", action="append", metavar="SITE", help="a site's tasks (repeatable; default: all)")  # type: ignore[attr-defined]

    args = h.arguments(__doc__ or "", DEFAULT_JSON, argv, repeat=3, suites=False, more=more)
    info = h.machine()
    bench = adapters.load("webarena-verified")
    tasks = [t for t in bench.tasks() if args.suite is None or t.split("/")[0] in args.suite]
    if not tasks:
        print(f"no WebArena-Verified site named {', '.join(args.suite or [])}", file=sys.stderr)
        return 2
    print(f"set-up: the manifest of {len(tasks)} tasks ...", file=sys.stderr, flush=True)
    m = manifest_mod.build(bench, tasks, pipeline.select_families(grammar=bench.grammar))
    h.versus_worker_bare(
        bench,
        m,
        bare,
        args,
        info,
        "WebArena-Verified",
        "bare loop in WebArena-Verified's interpreter (HAR entries, evaluate_task)",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
