"""The bare loop of bench/bench_miniwob.py, run in CUBE's interpreter (.venv-cube): MiniWoB++'s cells with no
verimut around them. Reads {"cells": [{"cell": ID, "task": TASK, "actions": [...]}, ...]} on stdin and prints
{"seconds": S, "verdicts": {ID: passed}} on stdout.

Per cell: the worker side's seeded `reset`, `execute` of each action (verimut's vocabulary done through the
cube's Playwright tool: the same browser actions), and the reward read (`verify`: `Task.evaluate()`). No
snapshot, no diff, no worker protocol, no ledger. The browser and the cube's page server start before the timer.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src/verimut/adapters/cube/worker_side"))

from miniwob_cube_bench import MiniWobCube


def main() -> int:
    cells = json.load(sys.stdin)["cells"]
    bench = MiniWobCube()
    bench.reset(cells[0]["task"])  # the browser and the page server start here, outside the timer
    verdicts: dict[str, bool | None] = {}
    began = time.perf_counter()
    for cell in cells:
        ep = bench.reset(cell["task"])
        for action in cell["actions"]:
            if bench.execute(ep, action)["error"] is not None:
                break
        try:
            verdicts[cell["cell"]] = bench.verify(ep, {})["passed"]
        except Exception:  # noqa: BLE001 - the reward is the benchmark's code; its error is a verdict too
            verdicts[cell["cell"]] = None
    print(json.dumps({"seconds": time.perf_counter() - began, "verdicts": verdicts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
