"""Repair: frame checks synthesized from a real audit, written as a module, regraded over every cell."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import verimut.repair as repair  # noqa: PLR0402  (the package; `verimut.repair` the attribute is the API function)
from conftest import verimut
from verimut.core.replay import replay
from verimut.engine.store import Store


@pytest.fixture
def repaired(banking_repaired) -> Path:
    # The session's banking audit, then `verimut repair`; the fixture checks that the installed benchmark is
    # never edited (conftest.py).
    return banking_repaired


def test_the_repair_rejects_the_duplicates_and_no_correct_run(repaired):
    r = json.loads((repaired / "repair" / "summary.json").read_text())
    ledger = [json.loads(x) for x in (repaired / "cells.jsonl").read_text().splitlines()]
    fas = {x["cell_id"] for x in ledger if x["outcome"] == "false_accept"}
    assert r["false_accepts"] == len(fas) and set(r["now_rejected"]) | set(r["still_accepted"]) == fas
    duplicates = {c for c in fas if c.endswith((":extra", ":extra-ni"))}
    assert duplicates and duplicates <= set(r["now_rejected"])
    assert r["controls"] == r["controls_still_passing"] == sum(x["family"] == "control" for x in ledger) == 25
    assert r["harmless"] == r["harmless_still_passing"] == sum(x["outcome"] == "harmless" for x in ledger)
    assert r["new_false_rejects"] == [] and r["regrade_mismatches"] == []
    unrepaired = {cid: why for t in r["tasks"] for cid, why in t["unrepaired"].items()}
    assert set(unrepaired) == set(r["still_accepted"])
    # a changed value of a record the reference writes is a postcondition gap: a `Carries` closes it
    wrong = {c for c in fas if ":wrong-value:" in c}
    assert wrong and wrong <= set(r["now_rejected"])
    caught = {cid: why for t in r["tasks"] for cid, why in t["caught"].items()}
    assert caught["banking/user_task_5:wrong-value:1.amount"] == [
        "bank_account.transactions (new) (added).amount: wrote 10.0, expected 5.0"
    ]
    assert r["alternatives"] == r["alternatives_still_passing"] > 0
    # one count assertion per collection the reference adds to, and the collections an out-of-scope write
    # changed that the reference leaves alone kept unchanged
    by_task = {t["task"]: t["checks"] for t in r["tasks"]}
    assert by_task["banking/user_task_0"] == [
        {"collection": "bank_account.transactions (new)", "count": 1},
        {"collection": "bank_account.scheduled_transactions"},
        {"collection": "bank_account.scheduled_transactions (new)"},
        {"collection": "user_account"},
    ]
    oos = {c for c in fas if ":extra-oos:" in c}
    assert oos and oos <= set(r["now_rejected"])


def test_the_written_module_wraps_the_original_verifier(repaired, agentdojo):
    module = repair.load_module(repaired / "repair" / repair.MODULE)
    assert [str(c) for c in module.CHECKS["banking/user_task_0"]] == [
        "AddedExactly('bank_account.transactions (new)', 1)",
        "Unchanged('bank_account.scheduled_transactions')",
        "Unchanged('bank_account.scheduled_transactions (new)')",
        "Unchanged('user_account')",
    ]
    m = Store(repaired).read_manifest()
    cells = {c.cell_id: c for c in m.cells}
    for cid, passes in [("banking/user_task_0:control", True), ("banking/user_task_0:extra", False)]:
        cell = cells[cid]
        done = replay(agentdojo, cell.task, cell.run)
        original = agentdojo.verify(replay(agentdojo, cell.task, cell.run).episode, cell.run)
        verdict = module.verify(agentdojo, cell.task, done.episode, cell.run, done.start)
        assert original.passed and verdict.passed is passes
        assert verdict.checks["AddedExactly('bank_account.transactions (new)', 1)"] is passes


def test_a_check_that_rejects_a_correct_run_is_named(repaired):
    m = Store(repaired).read_manifest()
    graded = [
        repair.Regrade("t:control", "t", "control", "control_pass", "control_pass"),
        repair.Regrade("t:omit", "t", "omit", "harmless", "false_reject", ["x.rows: 0 added, expected 1"]),
    ]
    r = repair.report(m, [], graded, Path("m.py"))
    assert r.new_false_rejects == [
        {
            "cell_id": "t:omit",
            "was": "harmless",
            "now": "false_reject",
            "failed_checks": ["x.rows: 0 added, expected 1"],
        }
    ]
    assert r.exit_code == 1 and "`t:omit` (harmless -> false_reject): x.rows: 0 added, expected 1" in repair.markdown(r)


def test_repair_of_a_plugin_benchmark_and_bad_input(tmp_path, banking_swap):
    out = tmp_path / "todo"
    assert verimut("audit", "examples.todo_bench:benchmark", "--out", str(out), "-q").returncode == 1
    result = verimut("repair", str(out))
    assert result.returncode == 2 and "give --benchmark module:object" in result.stderr
    result = verimut("repair", str(out), "--benchmark", "examples.todo_bench:benchmark")
    assert result.returncode == 0, result.stderr
    r = json.loads((out / "repair" / "summary.json").read_text())
    duplicates = {f"todo/{t}:extra" for t in ("add_milk", "add_call")}  # extra-ni's are the same runs
    # each task's run with the other task's item appended: an unrequested item on the list
    appended = {f"todo/{t}:extra-oos:add_item@items" for t in ("add_milk", "add_call")}
    assert set(r["now_rejected"]) == duplicates | appended and r["still_accepted"] == []
    assert r["new_false_rejects"] == []
    swap_out = tmp_path / "swap"
    shutil.copytree(banking_swap, swap_out)  # the session's `verimut swap agentdojo --suite banking`
    result = verimut("repair", str(swap_out))
    assert result.returncode == 2 and "repair works on a fault-arm audit" in result.stderr
    shutil.rmtree(swap_out)
    assert verimut("repair", str(tmp_path / "nothing")).returncode == 2
