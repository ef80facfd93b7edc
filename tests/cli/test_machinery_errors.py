"""A cell whose scoring process is killed by a signal is scored again (issue 43, item 1), on tests/killedbench.py.

0.4 recorded "the worker scoring this cell died (exit code -9)" as the cell's error for good: the audit lost the
finding (exit 0 where a clean run exits 1), and a rerun kept the error. Now a death by a signal is the machinery's
(`Evidence.infrastructure`): the cell is scored once more in the run, on a new worker, and on every rerun until
it scores. An exit (`os._exit(3)`, the benchmark's own) stays an error and is not retried (tests/cli/
test_misbehave.py, tests/executors/test_remote.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

CELL = "todo/add_milk:extra"


def _audit(out: Path, kills: int, counts: Path, control: str = "") -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "VERIMUT_KILLED_DIR": str(counts),
        "VERIMUT_KILLS": str(kills),
        "VERIMUT_KILL_CONTROL": control,
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "verimut.cli",
            "audit",
            "tests.killedbench:benchmark",
            "-o",
            str(out),
            "-q",
            "--workers",
            "2",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]


def _outcomes(out: Path) -> dict[str, str]:
    return {r["cell_id"]: r["outcome"] for r in _rows(out)}  # the last row of a cell is its outcome


def test_a_cell_whose_worker_is_killed_is_scored_again_in_the_run(tmp_path: Path):
    counts = tmp_path / "counts"
    counts.mkdir()
    clean = _audit(tmp_path / "clean", 0, counts)
    assert clean.returncode == 1, clean.stderr
    killed = _audit(tmp_path / "killed", 1, counts)
    assert killed.returncode == 1, killed.stderr  # 0.4: exit 0, its false accept lost
    assert _outcomes(tmp_path / "killed") == _outcomes(tmp_path / "clean")
    first = next(r for r in _rows(tmp_path / "killed") if r["cell_id"] == CELL)
    assert (first["outcome"], first["reason"]) == ("error", "the worker scoring this cell died (exit code -9)")
    assert first["evidence"]["infrastructure"] is True


def test_a_cell_still_lost_at_the_end_is_scored_on_a_rerun(tmp_path: Path):
    counts = tmp_path / "counts"
    counts.mkdir()
    out = tmp_path / "twice"
    first = _audit(out, 2, counts)  # killed in the run and in its one retry
    assert _outcomes(out)[CELL] == "error"
    assert first.returncode == 1, first.stderr  # add_call's and the appended items' false accepts
    assert f"1 cell(s) lost to the machinery (a worker killed, a browser closed; first: {CELL})" in first.stdout
    again = _audit(out, 2, counts)
    assert again.returncode == 1, again.stderr
    assert _outcomes(out)[CELL] == "false_accept"
    rerun = [r for r in _rows(out) if r["cell_id"] == CELL]
    assert [r["outcome"] for r in rerun] == ["error", "error", "false_accept"]


def test_the_cells_a_lost_control_blocked_are_scored_on_the_rerun(tmp_path: Path):
    counts = tmp_path / "counts"
    counts.mkdir()
    clean = _audit(tmp_path / "clean", 0, counts)
    out = tmp_path / "control"
    first = _audit(out, 2, counts, control="todo/add_call")
    assert _outcomes(out)["todo/add_call:control"] == "error"
    blocked = [r for r in _rows(out) if r["task"] == "todo/add_call" and r["unscorable"]]
    assert blocked and first.returncode == 1, first.stderr
    again = _audit(out, 2, counts, control="todo/add_call")
    assert again.returncode == clean.returncode == 1, again.stderr
    assert _outcomes(out) == _outcomes(tmp_path / "clean")  # the control, and every cell it blocked, scored
