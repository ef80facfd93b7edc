"""A benchmark in another interpreter, over JSON lines: audited like any other, and its crashes and hangs are cells' errors."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from conftest import verimut


def rows(out: Path) -> dict[str, dict]:
    return {r["cell_id"]: r for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}


def worker_processes() -> int:
    found = subprocess.run(["pgrep", "-f", "tests.remote_todo:Bench"], capture_output=True, text=True, check=False)
    return len(found.stdout.split())


def test_a_remote_benchmark_is_audited_and_its_crashes_and_hangs_are_errors(tmp_path):
    out = tmp_path / "remote"
    result = verimut("audit", "tests.remote_bench:create", "--out", str(out), "-q", "--workers", "2")
    assert result.returncode == 1, result.stderr  # t/ok's duplicate is a false accept
    r = rows(out)
    assert r["t/ok:control"]["outcome"] == "control_pass"
    assert r["t/ok:extra"]["outcome"] == "false_accept"
    assert r["t/ok:extra"]["evidence"]["differs_from_reference"][0]["collection"] == "items"
    # the worker process died while executing: that cell's error, and the audit went on
    assert r["t/crash:control"]["outcome"] == "error"
    assert r["t/crash:control"]["reason"] == "the benchmark worker died (exit code 7) during execute"
    # the verifier hung on claim-only: cut at the adapter's 3 s, and the group's later cells were scored
    assert r["t/midhang:claim-only"]["outcome"] == "error"
    assert r["t/midhang:claim-only"]["reason"] == "the benchmark worker did not answer within 3 s"
    assert r["t/midhang:extra"]["outcome"] == "false_accept"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scored"] == summary["cells"]
    deadline = time.time() + 10
    while time.time() < deadline and worker_processes():
        time.sleep(0.2)
    assert worker_processes() == 0  # no worker outlives the audit


def test_the_manifests_maps_share_one_benchmark_worker_a_slot(tmp_path, monkeypatch):
    """The manifest's maps (reference replays, then each task's facts) fork their processes afresh, but the
    benchmark workers (a browser each, for MiniWoB++) are started once for each slot and taken by that slot's
    process in every map; the scoring workers start their own, as before."""
    log = tmp_path / "resets.txt"
    monkeypatch.setenv("REMOTE_TODO_RESETS", str(log))
    result = verimut(
        "audit", "tests.remote_bench:create", "--task", "t/ok", "--task", "t/midhang", "--family", "extra",
        "--out", str(tmp_path / "o"), "-q", "--workers", "2",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    resets = [line.split() for line in log.read_text().splitlines()]
    # The audited tasks' manifest work ran in two maps of two processes: four workers if each process started its
    # own. (t/crash, not audited, is reset once for the suite's library, a map of one item: this process's worker.)
    in_manifest = {pid for pid, where, task in resets if where == "manifest" and task != "t/crash"}
    scoring = {pid for pid, where, _ in resets if where == "pool"}
    assert len(in_manifest) == 2, resets
    assert scoring and not scoring & in_manifest
    deadline = time.time() + 10
    while time.time() < deadline and worker_processes():
        time.sleep(0.2)
    assert worker_processes() == 0  # the parked ones too


def test_a_worker_that_cannot_start_is_one_line(tmp_path):
    (tmp_path / "badremote.py").write_text(
        "from verimut.adapters.remote import Remote\n"
        "def create(version=None):\n"
        "    return Remote('/nonexistent/python', 'x:y')\n"
    )
    result = verimut("audit", "badremote:create", "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "verimut: error: cannot start the benchmark worker /nonexistent/python: No such file or directory"
    )
