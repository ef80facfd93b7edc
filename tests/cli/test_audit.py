"""The pipeline through the real command line: records, resume (also after SIGKILL), bad input, exit codes."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, verimut, wait_for_rows


def ledger_ids(out: Path) -> list[str]:
    return [json.loads(line)["cell_id"] for line in (out / "cells.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture
def banking(banking_audit) -> Path:
    return banking_audit  # the session's banking audit (conftest.py): read it, or copy it to change it


def test_an_audit_records_every_cell_once_and_summarizes(banking):
    manifest = json.loads((banking / "manifest.json").read_text())
    ids = ledger_ids(banking)
    assert sorted(ids) == sorted(c["cell_id"] for c in manifest["cells"]) and len(set(ids)) == len(ids)
    rows = [json.loads(line) for line in (banking / "cells.jsonl").read_text().splitlines()]
    assert all({"cell_id", "benchmark", "task", "family", "outcome", "verdict", "evidence"} <= set(r) for r in rows)
    assert {r["outcome"] for r in rows if r["family"] == "control"} == {"control_pass"}
    summary = json.loads((banking / "summary.json").read_text())
    assert summary["counts"]["control"] == {"control_pass": 16 + 9}  # 16 user tasks, 9 injection tasks
    assert summary["counts_by_kind"]["user"]["control"] == {"control_pass": 16}
    fas = [r for r in rows if r["outcome"] == "false_accept"]
    assert len(summary["false_accepts"]) == len(fas) > 0
    for fa in summary["false_accepts"]:
        # an answer fault's end state is the reference's: its evidence is the answer edit, not a record
        assert (fa.get("answer") or fa["differs_from_reference"]) and fa["why_missed"]
    md = (banking / "summary.md").read_text()
    assert "banking/user_task_0:extra" in md and "none exists" in md


def test_running_again_resumes_and_scores_nothing_twice(banking, tmp_path):
    out = tmp_path / "again"
    shutil.copytree(banking, out)
    before = (out / "cells.jsonl").read_bytes()
    result = verimut("audit", "agentdojo", "--suite", "banking", "--out", str(out), "--quiet")
    assert result.returncode == 1
    assert (out / "cells.jsonl").read_bytes() == before


def test_a_sigkilled_run_resumes_to_the_same_results(banking, tmp_path):
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "verimut.cli", "audit", "agentdojo", "--suite", "banking", "--out", str(out), "-q"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ledger = out / "cells.jsonl"
    wait_for_rows(ledger, 30)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    scored = ledger.read_text().count("\n")
    assert 30 <= scored < len(ledger_ids(banking))
    with open(ledger, "ab") as f:  # what a write cut short by the kill would leave
        f.write(b'{"cell_id":"banking/user_task_3:omi')
    result = verimut("audit", "agentdojo", "--suite", "banking", "--out", str(out), "-q")
    assert result.returncode == 1, result.stderr
    ids = ledger_ids(out)
    assert len(ids) == len(set(ids)) == len(ledger_ids(banking))
    assert (out / "cells.jsonl.torn").read_bytes().startswith(b'{"cell_id":"banking/user_task_3:omi')

    def outcomes(d: Path) -> dict[str, str]:
        return {r["cell_id"]: r["outcome"] for r in map(json.loads, (d / "cells.jsonl").read_text().splitlines())}

    assert outcomes(out) == outcomes(banking)


def test_a_changed_manifest_is_refused(banking, tmp_path):
    out = tmp_path / "changed"
    shutil.copytree(banking, out)
    before = (out / "cells.jsonl").read_bytes()
    result = verimut("audit", "agentdojo", "--suite", "banking", "--family", "extra", "--out", str(out))
    assert result.returncode == 2
    assert "different manifest" in result.stderr and "families" in result.stderr
    assert (out / "cells.jsonl").read_bytes() == before


def test_a_tampered_manifest_is_refused(banking, tmp_path):
    out = tmp_path / "tampered"
    shutil.copytree(banking, out)
    text = (out / "manifest.json").read_text().replace('"omit"', '"omit "', 1)
    (out / "manifest.json").write_text(text)
    result = verimut("report", str(out))
    assert result.returncode == 2 and "modified" in result.stderr


def test_a_corrupt_ledger_line_is_named_and_nothing_is_lost(banking, tmp_path):
    out = tmp_path / "corrupt"
    shutil.copytree(banking, out)
    lines = (out / "cells.jsonl").read_text().splitlines(keepends=True)
    lines[2] = "this is not json\n"
    (out / "cells.jsonl").write_text("".join(lines))
    before = (out / "cells.jsonl").read_bytes()
    result = verimut("audit", "agentdojo", "--suite", "banking", "--out", str(out))
    assert result.returncode == 2 and "line 3" in result.stderr
    assert (out / "cells.jsonl").read_bytes() == before


def test_report_rebuilds_the_summary(banking, tmp_path):
    out = tmp_path / "report"
    shutil.copytree(banking, out)
    (out / "summary.md").unlink()
    result = verimut("report", str(out))
    assert result.returncode == 1 and (out / "summary.md").exists()
    assert "false_accept" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["audit", "nosuchbench"], "unknown benchmark 'nosuchbench'"),
        (["audit", "agentdojo", "--version", "v7"], "unknown AgentDojo version 'v7'"),
        (["audit", "agentdojo", "--suite", "bankin"], "unknown suite 'bankin'"),
        (["audit", "agentdojo", "--task", "banking/user_task_99"], "unknown task 'banking/user_task_99'"),
        (["audit", "agentdojo", "--family", "extra-nope"], "unknown fault family 'extra-nope'"),
        (["audit", "agentdojo", "--out", "src"], "is not a verimut output"),
        (["report", "src"], "is not a verimut output"),
        (["audit", "nosuchmodule:thing"], "cannot import 'nosuchmodule'"),
        (["audit", "examples.todo_bench:nothing"], "has no attribute 'nothing'"),
        (["audit", "verimut.core.run:Step"], "is a class: name an adapter object"),
        (["audit", "verimut.core.run:Action"], "is a class: name an adapter object"),
        (["audit", "verimut.core.run:__doc__"], "does not implement the adapter interface"),
        (["audit", "agentdojo", "--no-such-flag"], "No such option"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = verimut(*args)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("verimut: error:") and message in lines[0]
