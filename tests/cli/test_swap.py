"""The intent-swap census: rungs on real AgentDojo tasks, the census report, answers, start states, resume."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, verimut, wait_for_rows
from verimut.core.replay import replay
from verimut.core.run import Run
from verimut.engine.manifest import build
from verimut.engine.store import Store
from verimut.findings import swap


def rows(out: Path) -> dict[str, dict]:
    return {r["cell_id"]: r for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}


@pytest.fixture
def banking(banking_swap) -> Path:
    return banking_swap  # the session's banking census (conftest.py): read it, or copy it to change it


def test_rungs_of_real_banking_pairs(banking):
    cells = {c["cell_id"]: c for c in json.loads((banking / "manifest.json").read_text())["cells"]}

    def rung(i: int, j: int) -> tuple[str, str]:
        d = cells[f"banking/user_task_{i}:swap:user_task_{j}"]["detail"]
        return d["rung"], d["rung_reason"]

    # get_most_recent_transactions then send_money in both; only the amount differs
    assert rung(4, 3) == ("0", "same 2 call(s); argument values differ at #1.amount")
    # tasks 2 and 12 ship the very same reference run
    assert rung(2, 12) == ("0", "same 3 call(s) with the same arguments; the tasks differ in their answer")
    assert rung(3, 0) == ("1", "both change bank_account.transactions")  # two payments, other reads
    assert rung(15, 0)[0] == "2"  # task 15 changes the transactions and more
    assert rung(2, 0) == (
        "3",
        "i changes bank_account.scheduled_transactions; j changes bank_account.transactions",
    )
    assert rung(1, 0) == ("read-only", "the reference run of task i changes nothing")
    assert rung(7, 1)[0] == "0"  # the same single read: twins that differ only in their answers
    # 16 tasks: 16 diagonal controls and 240 ordered pairs
    assert sum(c["family"] == "control" for c in cells.values()) == 16
    assert sum(c["family"] == "swap" for c in cells.values()) == 240


def test_rungs_of_real_slack_twins(agentdojo):
    m = build(agentdojo, ["slack/user_task_1", "slack/user_task_6"], (), arm="swap")
    [cell] = [c for c in m.cells if c.cell_id == "slack/user_task_6:swap:user_task_1"]
    assert cell.detail["rung"] == "0"
    assert cell.detail["rung_reason"] == "same 3 call(s); argument values differ at #1.url, #2.body, #2.recipient"
    assert cell.run == m.tasks["slack/user_task_1"].reference


def test_the_census_reports_table_1_and_every_acceptance(banking):
    census = json.loads((banking / "summary.json").read_text())
    table = census["table"]["banking"]
    assert table["control"]["control_pass"] == table["control"]["cells"] == 16
    assert sum(n["cells"] for k, n in table.items() if k != "control") == 240
    ledger = rows(banking)
    accepted = {cid for cid, r in ledger.items() if r["outcome"].startswith("accepted_")}
    assert {a["cell_id"] for a in census["acceptances"]} == accepted and accepted
    for a in census["acceptances"]:
        assert a["verifier_task"] != a["run_task"] and a["rung"] in swap.RUNGS
        assert bool(a["effect_missing"]) == (a["outcome"] == "accepted_effect_absent")
    # task 5's verifier looks for a transaction that is already in the start state (as the fault arm found)
    five = ledger["banking/user_task_5:swap:user_task_0"]
    assert five["outcome"] == "accepted_effect_absent"
    assert five["evidence"]["effect_missing"][0].startswith("bank_account.transactions (new): a record the task added")
    md = (banking / "summary.md").read_text()
    assert "## Table 1" in md and "accepted, effect ABSENT" in md and "none exists" in md


def test_a_swapped_run_keeps_its_own_answer(banking, agentdojo):
    """Graded with task i's gold answer, some runs would pass; with their own (j's), the ledger rejects them."""
    m = Store(banking).read_manifest()
    ledger = rows(banking)
    would_pass_with_gold = []
    for cell in m.cells:
        if cell.family != swap.SWAP or m.tasks[cell.task].effect:
            continue  # read-only verifiers: they check the answer
        gold = Run(cell.run.actions, m.tasks[cell.task].reference.answer)
        with_gold = agentdojo.verify_as(cell.task, replay(agentdojo, cell.run_task, gold).episode, gold).passed
        own = agentdojo.verify_as(cell.task, replay(agentdojo, cell.run_task, cell.run).episode, cell.run).passed
        assert ledger[cell.cell_id]["verdict"] is own, cell.cell_id
        if with_gold and not own:
            would_pass_with_gold.append(cell.cell_id)
    assert len(would_pass_with_gold) > 10


def test_each_cell_states_the_start_state_its_verifier_gets(banking):
    raw = json.loads((banking / "manifest.json").read_text())["cells"]
    assert all(c["run"] is None and "start" not in c["detail"] for c in raw)  # said again on reading
    for c in Store(banking).read_manifest().cells:
        if c.family == "swap":
            j, i = c.detail["run_task"], c.task
            assert c.detail["start"] == (
                f"the run is replayed from {j}'s clean start, which the verifier also gets as its start state; "
                f"{i}'s own clean start is identical"
            )


def test_report_rebuilds_the_census(banking, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(banking, out)
    before = (out / "summary.md").read_text()
    (out / "summary.md").unlink()
    result = verimut("report", str(out))
    assert result.returncode == 1 and "intent-swap census" in result.stdout
    assert (out / "summary.md").read_text() == before


def test_a_sigkilled_swap_resumes_to_the_same_results(tmp_path):
    whole, out = tmp_path / "whole", tmp_path / "killed"
    args = ["swap", "agentdojo", "--suite", "slack", "-q", "--workers", "1"]
    assert verimut(*args, "--out", str(whole)).returncode == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "verimut.cli", *args, "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ledger = out / "cells.jsonl"
    wait_for_rows(ledger, 60)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    scored = ledger.read_text().count("\n")
    assert 60 <= scored < len(rows(whole))
    result = verimut(*args, "--out", str(out))
    assert result.returncode == 0, result.stderr
    ids = [json.loads(x)["cell_id"] for x in ledger.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == len(rows(whole))

    def decided(d: Path) -> dict[str, tuple]:
        return {k: (r["outcome"], r["verdict"], json.dumps(r["evidence"], sort_keys=True)) for k, r in rows(d).items()}

    assert decided(out) == decided(whole)


def test_swap_needs_an_adapter_that_can_grade_with_another_tasks_verifier(tmp_path):
    result = verimut("swap", "examples.todo_bench:benchmark", "--out", str(tmp_path / "t"))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "verimut: error: todo cannot run the intent-swap census: its adapter has no verify_as(task, episode, run)"
    )


def test_an_audit_and_a_swap_do_not_share_an_output(banking, tmp_path):
    out = tmp_path / "mixed"
    shutil.copytree(banking, out)
    before = (out / "cells.jsonl").read_bytes()
    result = verimut("audit", "agentdojo", "--suite", "banking", "--out", str(out), "-q")
    assert result.returncode == 2 and "holds a verimut swap run" in result.stderr
    assert (out / "cells.jsonl").read_bytes() == before
