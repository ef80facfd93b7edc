"""An installed package adds an executor by the `verimut.executors` entry-point group, like a benchmark or a family."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT

# The plug-in: the executor seam's whole interface, written against the engine's protocol alone. It scores in this
# process and counts the cells it was given, so the test can tell it (and not a built-in) scored them.
PLUGIN = """
from verimut.engine.executor import Settings


class Counting:
    name = "counting"
    startup_seconds = 0.0

    def __init__(self) -> None:
        self.cells = 0

    def close(self) -> None:
        print(f"counting executor scored {self.cells} cells")

    def map(self, fn, items, limit=None):
        return (fn(x) for x in items)

    def run(self, factory, groups):
        scorer = factory()
        for group in groups:
            for cell in group:
                self.cells += 1
                yield scorer.score(cell)


def make(settings: Settings) -> Counting:
    return Counting()
"""


def test_an_entry_point_adds_an_executor(tmp_path):
    site = tmp_path / "site"
    info = site / "counting_executor-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: counting-executor\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[verimut.executors]\ncounting = counting_executor:make\n")
    (site / "counting_executor.py").write_text(PLUGIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "verimut.cli", "audit", "examples.todo_bench:benchmark", "--executor", "counting"]
        + ["-o", str(out), "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr  # the example's loophole, found through the plug-in executor
    cells = len(json.loads((out / "manifest.json").read_text())["cells"])
    assert f"counting executor scored {cells} cells" in done.stdout
    (run,) = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert run["executor"] == "counting" and run["scored"] == cells
    unknown = subprocess.run(
        [sys.executable, "-m", "verimut.cli", "audit", "examples.todo_bench:benchmark", "--executor", "nope"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert (
        unknown.returncode == 2 and "unknown executor 'nope' (known: pool, inprocess, ray, counting)" in unknown.stderr
    )
