"""The cost of a reward-function audit against a bare loop of the same reward calls, in one run.

    .venv/bin/python bench/bench_rewards.py [--entries 5] [--out DIR]

1. `verimut audit reasoning-gym --executor inprocess` (one process, so both arms use one core): its wall time and
   its phases (runs.jsonl: building the manifest, scoring).
2. The bare loop: the same completions (every scored cell's, read from the audit's manifest), each handed to
   `extract_answer` and the dataset's `score_answer` in a plain Python loop, as a trainer's reward would be.

Prints the cells, both times, and the ratio per cell (verimut's whole wall time, and its scoring phase alone,
over the bare loop). docs/benchmarks/reasoning-gym.md has the figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-rewards-")) / "audit"
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "verimut.cli", "audit", "reasoning-gym", "--executor", "inprocess", "-q",
         "--option", f"entries={args.entries}", "-o", str(out), "--fail-on", "never"],
        check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wall = time.perf_counter() - began
    run = json.loads((out / "runs.jsonl").read_text().splitlines()[-1])
    manifest = json.loads((out / "manifest.json").read_text())
    scored = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    runs = {c["cell_id"]: c["run"] for c in manifest["cells"] if c["run"] is not None}
    completions = [(r["task"], runs[r["cell_id"]]["answer"]) for r in scored if r["cell_id"] in runs]

    import reasoning_gym
    from reasoning_gym.factory import DATASETS
    from reasoning_gym.utils import extract_answer

    made, entries = {}, {}
    for name in sorted(DATASETS):
        try:
            made[name] = reasoning_gym.create_dataset(name, size=args.entries, seed=42)
            entries[name] = [made[name][i] for i in range(args.entries)]
        except Exception:  # noqa: BLE001, S112  (composite: left out by the audit too)
            continue
    began = time.perf_counter()
    for task, completion in completions:
        name, index = task.rsplit("/", 1)
        try:
            made[name].score_answer(extract_answer(completion), entries[name][int(index)])
        except Exception:  # noqa: BLE001, S112  (a reward that raises: the audit records it as a cell error)
            continue
    bare = time.perf_counter() - began
    n = len(completions)
    print(f"cells scored: {len(scored)}; reward calls in the bare loop: {n}")
    print(f"verimut audit (inprocess): {wall:.1f} s wall, manifest {run['manifest_seconds']:.1f} s, "
          f"scoring {run['scoring_seconds']:.1f} s")  # fmt: skip
    print(f"bare loop: {bare:.2f} s ({1e3 * bare / n:.3f} ms per call)")
    print(f"per cell: verimut {1e3 * wall / n:.3f} ms (whole run), {1e3 * run['scoring_seconds'] / n:.3f} ms (scoring)")
    print(f"ratio: {wall / bare:.1f}x (whole run), {run['scoring_seconds'] / bare:.1f}x (scoring alone)")


if __name__ == "__main__":
    main()
