"""The public API (docs/api.md): audit, swap and repair by name, the same files and counts as the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT
from verimut import AuditError
from verimut.api import audit, repair
from verimut.engine.store import Store

TODO_BENCH = "examples.todo_bench:benchmark"


@pytest.fixture
def here(monkeypatch):
    monkeypatch.chdir(ROOT)  # a module:object benchmark is found from the working directory, as on the command line
    monkeypatch.syspath_prepend(str(ROOT))


def test_an_audit_by_name_writes_what_the_command_line_writes(here, tmp_path):
    summary = audit(TODO_BENCH, tmp_path / "api")
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "verimut.cli",
            "audit",
            TODO_BENCH,
            "-q",
            "--executor",
            "inprocess",
            "-o",
            str(tmp_path / "cli"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert cli.returncode == (1 if summary.false_accepts else 0), cli.stderr
    api_summary = json.loads((tmp_path / "api" / "summary.json").read_text())
    cli_summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert {**api_summary, "seconds": None} == {**cli_summary, "seconds": None}  # all but the wall time
    assert len(summary.false_accepts) == len(cli_summary["false_accepts"]) > 0  # the example has a loophole
    rows = Store(tmp_path / "api").rows()
    assert set(rows) == set(Store(tmp_path / "cli").rows())


def test_a_repair_by_directory_rejects_the_false_accepts(here, tmp_path):
    audit(TODO_BENCH, tmp_path, executor="pool", workers=2)
    report = repair(tmp_path, benchmark=TODO_BENCH)
    assert report.checks > 0 and not report.new_false_rejects
    assert report.false_accepts > 0 and not report.still_accepted
    assert (tmp_path / "repair" / "summary.json").exists()


def test_bad_input_is_one_audit_error(here, tmp_path):
    with pytest.raises(AuditError, match="unknown executor 'nope'"):
        audit(TODO_BENCH, tmp_path / "a", executor="nope")
    with pytest.raises(AuditError, match="options are for a benchmark given by name"):
        from examples.todo_bench import benchmark

        audit(benchmark, tmp_path / "b", options={"x": "1"})
    assert not (tmp_path / "b").exists()
