"""The cost of a reward-function audit against a bare loop of the same reward calls, in one run.

    .venv/bin/python bench/bench_rewards.py [--entries 5] [--out DIR]

1. `verimut audit reasoning-gym --executor inprocess` (one process, so both arms use one core): its wall time and
   its phases (runs.jsonl: building the manifest, scoring).
2. The bare loop: the same completions (every scored cell's, read from the audit's manifest), each handed to
   `extract_answer` and the dataset's `score_answer` in a plain Python loop, as a trainer's reward would be.

3. verimut's scoring phase again, on a copy of the audit's manifest (the audit resumes it: every cell scored, no
   manifest built), timed between the bare loop run once before it and once after: a shared machine's load moves
   within a run, and the two loops bracket the scoring they are compared with.

Prints the cells, the times, and the ratio per cell (verimut's whole wall time, and its scoring phase alone, over
the mean of the two bare loops), and the same ratio in CPU time (the bare loop's `time.process_time`, the scoring's
`scoring_cpu_seconds` from runs.jsonl), which a shared machine's load moves far less than the wall time. docs/rewards-functions.md has the figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def audit(out: Path, entries: int) -> None:
    subprocess.run(
        [sys.executable, "-m", "verimut.cli", "audit", "reasoning-gym", "--executor", "inprocess", "-q",
         "--option", f"entries={entries}", "-o", str(out), "--fail-on", "never"],
        check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def rescore(out: Path, entries: int) -> tuple[float, float]:
    """The audit's scoring phase once more, on its own manifest (a copy of the directory without its ledger, which
    the audit resumes: every cell scored again, no manifest built): its scoring seconds, wall and CPU."""
    again = out.parent / f"{out.name}-again"
    shutil.rmtree(again, ignore_errors=True)
    again.mkdir()
    shutil.copy(out / "manifest.json", again / "manifest.json")
    audit(again, entries)
    run = json.loads((again / "runs.jsonl").read_text().splitlines()[-1])
    return float(run["scoring_seconds"]), float(run["scoring_cpu_seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-rewards-")) / "audit"
    began = time.perf_counter()
    audit(out, args.entries)
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

    def loop() -> tuple[float, float]:
        began, cpu = time.perf_counter(), time.process_time()
        for task, completion in completions:
            name, index = task.rsplit("/", 1)
            try:
                made[name].score_answer(extract_answer(completion), entries[name][int(index)])
            except Exception:  # noqa: BLE001, S112  (a reward that raises: the audit records it as a cell error)
                continue
        return time.perf_counter() - began, time.process_time() - cpu

    # The bare loop before and after the audit's scoring is timed again (below): a shared machine's load moves
    # within a run, and the mean of the two brackets it.
    (before, before_cpu) = loop()
    scoring, scoring_cpu = rescore(out, args.entries)
    (after, after_cpu) = loop()
    bare, bare_cpu = (before + after) / 2, (before_cpu + after_cpu) / 2
    n = len(completions)
    print(f"cells scored: {len(scored)}; reward calls in the bare loop: {n}")
    print(f"verimut audit (inprocess): {wall:.1f} s wall, manifest {run['manifest_seconds']:.1f} s, "
          f"scoring {run['scoring_seconds']:.1f} s")  # fmt: skip
    print(f"bare loop: {before:.2f} s before, {after:.2f} s after ({1e3 * bare / n:.3f} ms per call, their mean)")
    print(f"bare loop CPU: {before_cpu:.2f} s before, {after_cpu:.2f} s after")
    print(f"verimut's scoring again, between the two: {scoring:.2f} s wall, {scoring_cpu:.2f} s CPU")
    print(f"per cell: verimut {1e3 * wall / n:.3f} ms (whole run), {1e3 * scoring / n:.3f} ms (scoring)")
    print(f"ratio: {wall / bare:.2f}x (whole run), {scoring / bare:.2f}x (scoring alone)")
    print(f"ratio of CPU time, scoring alone: {scoring_cpu / bare_cpu:.2f}x (what a shared machine's load moves least)")


if __name__ == "__main__":
    main()
