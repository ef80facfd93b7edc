"""What recording reads costs in a worker: `verify` against `verify_reading`, on each task's reference end.

    APPWORLD_ROOT=<suite> .venv-appworld/bin/python bench/bench_worker_reads.py appworld [--rounds 3]
    .venv-webarena/bin/python bench/bench_worker_reads.py webarena [--rounds 3]

Runs in the benchmark's own interpreter, on the worker-side adapter (standard library and the benchmark only):
every task's reference run is executed once, then each round calls `verify` and `verify_reading` on every
reference end, in alternating order. Wall time by `os.times()` (AppWorld freezes the clock, and with it
`time.perf_counter`, while a world is live).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

SIDES = {
    "appworld": ("appworld/worker_side", "appworld_world", "AppWorldBench"),
    "webarena": ("webarena/worker_side", "webarena_bench", "WebArenaVerifiedBench"),
}


def _time(bench: Any, ends: list[tuple[Any, Any]], rounds: int, into: dict[str, float]) -> None:
    """Add each method's wall time over `ends`, `rounds` times, in alternating order."""
    for i in range(rounds):
        order = ["verify", "verify_reading"]
        for method in order if i % 2 == 0 else order[::-1]:
            began = os.times().elapsed
            for episode, run in ends:
                getattr(bench, method)(episode, run)
            into[method] += os.times().elapsed - began


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("benchmark", choices=sorted(SIDES))
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    folder, module, name = SIDES[args.benchmark]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src/verimut/adapters" / folder))
    bench = getattr(__import__(module), name)()
    totals = {"verify": 0.0, "verify_reading": 0.0}
    ends: list[tuple[Any, Any]] = []
    for task in bench.tasks():
        episode = bench.reset(task)
        run = bench.reference(task, episode)  # AppWorld's runs the solution in the world as it records it
        if args.benchmark == "webarena":
            for action in run["actions"]:
                bench.execute(episode, action)
            ends.append((episode, run))
        else:  # one live AppWorld world per process: this task's calls are timed before the next reset
            _time(bench, [(episode, run)], args.rounds, totals)
    _time(bench, ends, args.rounds, totals)
    ratio = totals["verify_reading"] / totals["verify"]
    print(
        f"{args.benchmark}: {len(bench.tasks())} reference ends x {args.rounds} rounds: verify "
        f"{totals['verify']:.2f} s, verify_reading {totals['verify_reading']:.2f} s ({ratio:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
