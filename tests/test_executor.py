"""Executors: the same ledger content from each, and a pool that survives hangs and dead workers."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import verimut


def outcomes(out: Path) -> dict[str, tuple[str, object]]:
    rows = map(json.loads, (out / "cells.jsonl").read_text().splitlines())
    return {r["cell_id"]: (r["outcome"], r["verdict"], json.dumps(r["evidence"], sort_keys=True)) for r in rows}


def test_pool_and_in_process_record_the_same_cells(tmp_path):
    runs = {}
    for executor in ("pool", "inprocess"):
        out = tmp_path / executor
        args = ["audit", "agentdojo", "--suite", "slack", "--out", str(out), "-q", "--executor", executor]
        result = verimut(*args, "--workers", "2")
        assert result.returncode == 1, result.stderr
        runs[executor] = outcomes(out)
    assert runs["pool"] == runs["inprocess"] and len(runs["pool"]) > 50


def test_a_hanging_cell_is_cut_and_a_dead_worker_replaced(tmp_path):
    out = tmp_path / "trouble"
    args = ["audit", "tests.troublebench:benchmark", "--out", str(out), "-q", "--timeout", "2", "--workers", "2"]
    result = verimut(*args)
    assert result.returncode == 1, result.stderr  # t/ok's duplicate is a false accept
    rows = {r["cell_id"]: r for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}
    assert rows["t/hang:control"]["outcome"] == "error" and "timed out after 2 s" in rows["t/hang:control"]["reason"]
    assert rows["t/die:control"]["outcome"] == "error" and "died (exit code 3)" in rows["t/die:control"]["reason"]
    assert rows["t/ok:control"]["outcome"] == "control_pass"
    assert rows["t/ok:extra"]["outcome"] == "false_accept"
    assert rows["t/hang:extra"]["unscorable"] is True
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scored"] == summary["cells"]


def test_bad_executor_options_exit_2():
    for args, message in [
        (["--executor", "threads"], "unknown executor 'threads'"),
        (["--workers", "0"], "--workers must be at least 1"),
        (["--timeout", "0"], "--timeout must be positive"),
    ]:
        result = verimut("audit", "agentdojo", *args)
        assert result.returncode == 2 and message in result.stderr, result.stderr
