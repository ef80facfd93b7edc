"""AppWorld's intent-swap census, for real: the synthetic suite on the real engine, graded through `verify_as`.

Three tasks: noteupdate_1/2 make the same calls with other values (Rung-0), venmosend_1 changes other
collections (Rung-3). Every evaluator asserts its own pinned values and the exact set of changed
models, so no other task's run may pass it; a run of task i's own calls may, from any start that is i's.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, verimut

PYTHON = ROOT / ".venv-appworld" / "bin" / "python"
if not PYTHON.exists():
    pytest.skip(
        "AppWorld's environment .venv-appworld is missing: scripts/install-appworld.sh", allow_module_level=True
    )

from verimut import api
from verimut.adapters import appworld as adapter
from verimut.adapters.remote import Handle, Remote
from verimut.core.benchmark import resolve

TASKS = ("noteupdate_1", "noteupdate_2", "venmosend_1")


def rows(out: Path) -> dict[str, dict[str, Any]]:
    return {r["cell_id"]: r for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def census(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("appworld-swap") / "swap"
    picked = [arg for t in TASKS for arg in ("--task", t)]
    # In process: one AppWorld worker for all 9 cells (a pool would start one per process).
    result = verimut("swap", "appworld", *picked, "--executor", "inprocess", "--out", str(out), "-q")
    assert result.returncode == 0, result.stderr  # no acceptance with the requested effect absent
    return out


@pytest.fixture(scope="module")
def bench() -> Remote:
    return adapter.create(appworld_python=str(PYTHON))


def test_the_census_completes_and_every_control_passes(census):
    r = rows(census)
    assert len(r) == len(TASKS) ** 2
    assert {t: r[f"{t}:control"]["outcome"] for t in TASKS} == dict.fromkeys(TASKS, "control_pass")
    summary = json.loads((census / "summary.json").read_text())
    assert summary["scored"] == summary["cells"] == 9
    assert summary["provenance"]["synthetic"].startswith("yes")
    # AppWorld's ids have no suite prefix: every pair is in one suite, named so in the reports
    assert list(summary["table"]) == [""]
    assert "| all tasks | Diag (control) | 3 | 3 | 3/3 pass |" in (census / "summary.md").read_text()
    assert (census / "report.html").exists()


def test_off_diagonal_verdicts_are_task_is_evaluator(census):
    r = rows(census)
    swapped = {c: x for c, x in r.items() if ":swap:" in c}
    assert len(swapped) == 6 and {x["outcome"] for x in swapped.values()} == {"rejected"}
    for cell, x in swapped.items():
        i = cell.split(":")[0]
        # the very tests of i's own evaluator (its control's), not those of the run's task
        assert x["evidence"]["checks"].keys() == r[f"{i}:control"]["evidence"]["checks"].keys(), cell
    # Rung-0: the same calls on another note; i's evaluator rejects it on its pinned note alone
    twin = r["noteupdate_1:swap:noteupdate_2"]
    manifest = json.loads((census / "manifest.json").read_text())
    detail = next(c["detail"] for c in manifest["cells"] if c["cell_id"] == "noteupdate_1:swap:noteupdate_2")
    assert detail["rung"] == "0"
    failed = [k for k, ok in twin["evidence"]["checks"].items() if not ok]
    assert failed == ["assert the updated note is private_data.note_id, keeps its title,"]
    assert twin["evidence"]["effect_missing"]  # and the oracle agrees: i's note is untouched
    # Rung-3: a venmo run under a note task's evaluator fails its model-set check too
    assert r["noteupdate_1:swap:venmosend_1"]["evidence"]["verifier"].endswith("/4 tests pass")
    assert r["venmosend_1:swap:noteupdate_1"]["evidence"]["verifier"].endswith("/3 tests pass")


def test_verify_as_accepts_task_is_own_run_and_agrees_with_verify(bench):
    """verify_as can pass: i's calls from j's start (the same world) satisfy i's evaluator and not j's."""
    run = bench.reference("noteupdate_1", bench.reset("noteupdate_1"))
    episode: Handle = bench.reset("noteupdate_2")  # from j's start (the same world as i's)
    assert all(bench.execute(episode, a).error is None for a in run.actions)
    as_i, as_j = bench._verify_as("noteupdate_1", episode, run), bench._verify_as("noteupdate_2", episode, run)
    assert as_i.passed and not as_j.passed
    # on the episode's own task, verify_as and AppWorld's own world.evaluate() agree test by test
    assert bench.verify(episode, run) == as_j


def test_verify_as_is_announced(bench):
    assert bench.verify_as is not None


def test_graded_in_place_the_census_says_what_a_replay_per_cell_says(census, tmp_path):
    """One replay per run, every evaluator of its row on that end (each on its own copy of it), gives each cell
    the outcome and evidence a fresh replay per cell gives."""
    bench = adapter.create(appworld_python=str(PYTHON))
    per_cell = dataclasses.replace(resolve(bench), grades_in_place=False)
    assert resolve(bench).grades_in_place  # the census grades in place by default
    api.swap(per_cell, tmp_path / "per-cell", tasks=TASKS)  # in process, as the census fixture

    def said(out: Path) -> dict[str, Any]:
        return {c: {k: v for k, v in r.items() if k != "seconds"} for c, r in rows(out).items()}

    assert said(tmp_path / "per-cell") == said(census)
