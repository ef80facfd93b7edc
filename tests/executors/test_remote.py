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
