"""Benchmark: a browser benchmark's whole default audit with one browser worker and with N (issue 44, item 2).

Run from the repository root (CUBE's environment for MiniWoB++, the workarena extra for the stand-in):

    nice .venv/bin/python bench/bench_browsers.py miniwob                  # 1 vs every core, the default audit
    nice .venv/bin/python bench/bench_browsers.py workarena -- --stand-in  # the WorkArena stand-in (not ServiceNow)
    .venv/bin/python bench/bench_browsers.py miniwob --workers 2 -- --task click-checkboxes/1 --task enter-text/1

Each arm is the command a user runs, `verimut audit BENCH ARGS --workers W --out DIR -q`, into a fresh directory:
the manifest's build (reference replays, censuses, out-of-scope trials) and the scoring, each on W processes with a
browser each. The arms alternate (1 then N, then N then 1, ...) and the ratio is taken inside each repeat, because
the machine is shared. Then the two ledgers are compared cell by cell (outcome): a cell whose outcome differs is
listed (browser replays vary: `replays_vary`), and the manifests' content hashes must be equal.

stdout gets a markdown table; every figure goes to the JSON file (default bench/out/browsers-BENCH-latest.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("bench", help="miniwob, miniwob-gym or workarena")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="N (default: the cores)")
    p.add_argument("--repeat", type=int, default=1, help="pairs of runs (default 1: a default audit is long)")
    p.add_argument("--keep", type=Path, default=None, help="keep each arm's output directory under this one")
    p.add_argument("--json", type=Path, default=None)
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    a = p.parse_args(argv[:cut])
    a.args = argv[cut + 1 :]  # after --: more arguments of `verimut audit` (--stand-in, --task ...)
    return a


def outcomes(out: Path) -> dict[str, str]:
    """Each cell's outcome, the last row of a cell winning (a cell scored again after a crash)."""
    rows = (json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines() if line.strip())
    return {r["cell_id"]: r["outcome"] for r in rows}


def manifest_hash(out: Path) -> str:
    return str(json.loads((out / "manifest.json").read_text()).get("content_hash", ""))


def run_arm(bench: str, args: Sequence[str], workers: int, out: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "verimut.cli", "audit", bench, *args, "--workers", str(workers), "--out", str(out)]
    load = os.getloadavg()[0]
    began = time.monotonic()
    done = subprocess.run([*cmd, "-q"], cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.monotonic() - began
    if done.returncode not in (0, 1):  # 1: findings
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    found = outcomes(out)
    return {
        "workers": workers,
        "wall_s": round(wall, 1),
        "exit": done.returncode,
        "load_at_start": round(load, 2),
        "load_at_end": round(os.getloadavg()[0], 2),
        "cells": len(found),
        "outcomes": dict(Counter(found.values())),
        "manifest": manifest_hash(out),
    }


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_args(argv)
    if a.workers < 2:
        raise SystemExit("--workers: N must be at least 2 (the arm it is compared with has 1)")
    work = Path(tempfile.mkdtemp(prefix="bench-browsers-"))
    repeats: list[dict[str, Any]] = []
    differ: dict[str, dict[str, str]] = {}
    try:
        for r in range(a.repeat):
            arms = (1, a.workers) if r % 2 == 0 else (a.workers, 1)
            got: dict[int, dict[str, Any]] = {}
            ledgers: dict[int, dict[str, str]] = {}
            for w in arms:
                out = work / f"r{r}-w{w}"
                print(f"repeat {r}: {w} worker(s) ...", file=sys.stderr, flush=True)
                got[w] = run_arm(a.bench, a.args, w, out)
                ledgers[w] = outcomes(out)
                if a.keep is not None:
                    shutil.copytree(out, a.keep / out.name, dirs_exist_ok=True)
                print(f"  {got[w]['wall_s']} s, {got[w]['cells']} cells", file=sys.stderr, flush=True)
            one, many = ledgers[1], ledgers[a.workers]
            for cell in sorted(set(one) | set(many)):
                if one.get(cell) != many.get(cell):
                    differ.setdefault(cell, {})[f"r{r}"] = f"{one.get(cell)} (1) / {many.get(cell)} ({a.workers})"
            repeats.append(
                {
                    "one": got[1],
                    "many": got[a.workers],
                    "ratio": round(got[a.workers]["wall_s"] / got[1]["wall_s"], 3),
                    "same_manifest": got[1]["manifest"] == got[a.workers]["manifest"],
                    "cells_differ": sum(1 for d in differ.values() if f"r{r}" in d),
                }
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ratios = [x["ratio"] for x in repeats]
    report = {
        "bench": a.bench,
        "args": a.args,
        "workers": a.workers,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "repeats": repeats,
        "ratio_min": min(ratios),
        "ratio_median": statistics.median(ratios),
        "cells_that_differ": differ,
    }
    path = a.json or HERE / "out" / f"browsers-{a.bench}-latest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"| measure | 1 worker | {a.workers} workers |")
    print("|---|---|---|")
    for i, x in enumerate(repeats):
        print(f"| wall time, repeat {i} | {x['one']['wall_s']} s | {x['many']['wall_s']} s ({x['ratio']}x) |")
        print(f"| cells, repeat {i} | {x['one']['cells']} | {x['many']['cells']} |")
        print(f"| load average at start, repeat {i} | {x['one']['load_at_start']} | {x['many']['load_at_start']} |")
    print(
        f"\nN / 1, min / median: {min(ratios)}x / {statistics.median(ratios)}x; same manifest: "
        f"{all(x['same_manifest'] for x in repeats)}; cells whose outcome differs: {len(differ)}"
    )
    for cell, d in differ.items():
        print(f"  {cell}: {d}")
    print(f"every figure: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
