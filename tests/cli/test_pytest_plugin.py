"""The pytest plugin: the ten-line example in docs/ci.md against AgentDojo, and the Audit API."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, verimut
from verimut.cli.gate import GateError
from verimut.cli.pytest_plugin import Audit, run_audit


def _readme_example() -> str:
    readme = (ROOT / "docs" / "ci.md").read_text()
    [block] = re.findall(r"```python\n(# test_verifiers\.py.*?)```", readme, re.DOTALL)
    return block


def test_the_readme_example_is_ten_lines_and_fails_with_the_evidence(tmp_path):
    example = _readme_example()
    assert len(example.splitlines()) == 10
    (tmp_path / "test_verifiers.py").write_text(example)
    # A fresh pytest process, as the benchmark author runs it: the fixture comes from the
    # installed entry point, nothing else is configured.
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "test_verifiers.py", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"},
    )
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    assert "1 failed" in out
    assert "verimut: 'false_accept>0' holds for agentdojo v1.2: false_accept>0 (false_accept = 2)" in out
    for task in ("banking/user_task_0", "banking/user_task_3"):
        assert f"{task}:extra: confirmed false accept: repeated the last write, #1 send_money" in out
    assert out.count("bank_account.transactions (new): 1 added") >= 4  # in each headline and each diff
    assert "why it was missed: UserTask0.utility(), measured: read bank_account.transactions" in out
    assert "wrong-value" not in out.split("FAILURES", 1)[1].split("report:")[0]  # only the two extras failed


def _todo():
    spec = importlib.util.spec_from_file_location("todo_bench_example", ROOT / "examples" / "todo_bench.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TodoBench()


@pytest.fixture(scope="module")
def todo(tmp_path_factory) -> Audit:
    return run_audit(_todo(), tmp_path_factory.mktemp("todo"))


# extra-ni's runs are extra's: one finding each, under extra (the other cell is `same_run`)
DUPLICATES = ["todo/add_milk:extra", "todo/add_call:extra"]
# Each task's run with the other task's item appended: an item nobody asked for, on the list.
APPENDED = ["todo/add_milk:extra-oos:add_item@items", "todo/add_call:extra-oos:add_item@items"]
FOUND = [DUPLICATES[0], APPENDED[0], DUPLICATES[1], APPENDED[1]]


def test_a_false_accept_fails_the_test_with_its_evidence(todo):
    assert todo.false_accepts == FOUND
    with pytest.raises(pytest.fail.Exception) as e:
        todo.assert_no_false_accepts()
    message = str(e.value)
    assert message.startswith("verimut: 'false_accept>0' holds for todo 1: false_accept>0 (false_accept = 4)")
    for cid in DUPLICATES:
        assert re.search(
            rf"\n{cid}: confirmed false accept: repeated the last (non-idempotent )?write, #1 add_item", message
        )
    for cid, other in zip(APPENDED, ("call mum", "buy milk")):
        assert f"\n{cid}: confirmed false accept: appended todo/" in message and f"add_item(text='{other}')" in message
    assert message.count("    items: 1 added") == 4
    assert message.count('added: "buy milk"') == message.count('added: "call mum"') == 2  # duplicate and appended
    assert "A zero means none found, not none exists." in message


def test_allowed_false_accepts_and_gates(todo):
    todo.assert_no_false_accepts(allow=FOUND)
    with pytest.raises(pytest.fail.Exception, match=r"\(2 allowed cell\(s\) left out\)"):
        todo.assert_no_false_accepts(allow=DUPLICATES)
    todo.check("claim-only.false_accept>0 or error>0")
    with pytest.raises(pytest.fail.Exception, match=r"claim-only\.rejected>1 \(claim-only\.rejected = 2\)"):
        todo.check("claim-only.rejected>1")
    with pytest.raises(ValueError, match="todo/add_tea:extra"):
        todo.assert_no_false_accepts(allow=["todo/add_tea:extra"])
    with pytest.raises(GateError, match="no count 'acceptance'"):
        todo.check("acceptance>0")


def test_the_fixture_is_registered_and_selects(verimut_audit):
    audit = verimut_audit(_todo(), tasks=["todo/add_milk"], families=["omit", "claim-only"])
    assert audit.summary.cells == 3 and audit.summary.scored == 3
    audit.assert_no_false_accepts()
    assert audit.directory.is_dir() and (audit.directory / "summary.md").exists()


def test_the_fixture_takes_a_baseline(verimut_audit, tmp_path):
    from diffbench import after, before
    from verimut.cli.pytest_plugin import BaselineWarning
    from verimut.core.errors import AuditError

    v1 = verimut_audit(before, families=["extra"])
    # The file a benchmark's repository commits: `verimut baseline DIR > verimut-baseline.json`.
    r = verimut("baseline", str(v1.directory))
    assert r.returncode == 0, r.stderr
    path = tmp_path / "verimut-baseline.json"
    path.write_text(r.stdout)
    with pytest.raises(pytest.fail.Exception, match="todo/add_milk:extra: confirmed false accept"):
        v1.assert_no_false_accepts()  # without the baseline, its one false accept fails the test
    verimut_audit(before, families=["extra"], baseline=path).assert_no_false_accepts()  # held: passes
    v1.check("false_accept>0", baseline=path)  # the same, with the baseline given to the check
    # Version 2 closed add_milk's loophole and opened add_call's: the new one fails, the fixed one is named.
    v2 = verimut_audit(after, families=["extra"], baseline=path)
    with (
        pytest.warns(BaselineWarning, match="the baselined false_accept todo/add_milk:extra no longer occurs"),
        pytest.raises(pytest.fail.Exception, match=r"todo/add_call:extra: confirmed false accept") as e,
    ):
        v2.assert_no_false_accepts()
    assert "1 confirmed false accept(s) in" in str(e.value) and "baselined finding(s) left out" not in str(e.value)
    with pytest.raises(AuditError, match="is a baseline of 'todo-diff', not of 'todo'"):
        verimut_audit(_todo(), families=["extra"], baseline=path)


def test_a_failure_shows_the_benchmarks_control_characters_inert_and_out_may_be_a_string(tmp_path, monkeypatch):
    # issue 43: ESC, BEL and RLO in task data reached the terminal raw through the failure message; out="dir" crashed
    from escbench import EscBench

    monkeypatch.chdir(tmp_path)
    audit = run_audit(EscBench(), "esc", families=["extra"])
    assert audit.directory == tmp_path / "esc" or audit.directory.resolve() == (tmp_path / "esc").resolve()
    with pytest.raises(pytest.fail.Exception) as e:
        audit.assert_no_false_accepts()
    message = str(e.value)
    assert "extra: confirmed false accept" in message
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", message)
    assert "\\x1b]0;pwned\\x07" in message
