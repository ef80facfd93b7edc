"""Rewards: the three formulas, their registry, and what confirmed false accepts earn on a real audit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT, verimut
from verimut import rewards

names = st.sampled_from("abcde")
checks = st.dictionaries(names, st.booleans(), min_size=1)


def test_formulas_on_several_checks_by_hand():
    run = {"a": True, "b": False, "c": True}
    start = {"a": False, "b": False, "c": True}
    assert rewards.canopy(run, start, 0.5) == 0.0
    assert rewards.entropy_preserving(run, start, 0.5) == pytest.approx(2 / 3)
    # a and b failed initially; a passes now: progress 1/2
    assert rewards.procredit(run, start, 0.5) == pytest.approx(0.25)
    assert rewards.procredit({"a": True, "b": True, "c": True}, start, 0.2) == pytest.approx(1.2)


def test_one_boolean_verdict_reduces_every_formula_to_it():
    for verdict in (True, False):
        got = rewards.of({"verdict": verdict}, {"verdict": False}, 0.5)
        assert got["canopy"] == got["entropy-preserving"] == float(verdict)
        assert got["procredit"] == (1.5 if verdict else 0.0)


@given(checks, checks, st.floats(0.01, 10))
def test_formula_bounds(run, start, c):
    assert 0 <= rewards.canopy(run, start, c) <= rewards.entropy_preserving(run, start, c) <= 1
    assert rewards.canopy(run, start, c) <= rewards.procredit(run, start, c) <= 1 + c


@given(checks, checks, checks, st.floats(0.01, 10))
def test_for_any_c_means_for_every_positive_c(edit, control, start, c):
    if rewards.for_any_c(edit, control, start):
        assert rewards.procredit(edit, start, c) >= rewards.procredit(control, start, c) - 1e-12


@pytest.fixture(scope="module")
def banking(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rewards") / "banking"
    result = verimut("audit", "agentdojo", "--suite", "banking", "--out", str(out), "-q")
    assert result.returncode == 1, result.stderr
    return out


def test_false_accepts_show_their_reward_beside_their_controls(banking):
    summary = json.loads((banking / "summary.json").read_text())
    per_cell = json.loads((banking / "rewards.json").read_text())
    rows = [json.loads(x) for x in (banking / "cells.jsonl").read_text().splitlines()]
    graded = {r["cell_id"] for r in rows if r["verdict"] is not None}
    assert set(per_cell) == graded
    assert summary["false_accepts"]
    for fa in summary["false_accepts"]:
        control = per_cell[fa["cell_id"].split(":")[0] + ":control"]
        assert {f: v["control"] for f, v in fa["rewards"].items()} == control
        assert {f: v["edit"] for f, v in fa["rewards"].items()} == per_cell[fa["cell_id"]]
        # one boolean verdict that passed: the same reward as the correct run, under every formula
        assert fa["earns_full_reward"] and fa["procredit_any_c"]
    assert summary["rewards"]["conclusion"].startswith(f"{len(summary['false_accepts'])} of ")
    assert "for any c > 0" in summary["rewards"]["conclusion"]
    # banking/user_task_5's verifier already passes on the clean start: ProCredit gives no progress credit
    assert per_cell["banking/user_task_5:control"]["procredit"] == 1.0
    assert per_cell["banking/user_task_0:control"]["procredit"] == 1.5


def test_a_user_module_adds_a_formula_and_c_is_configurable(banking, tmp_path):
    out = tmp_path / "copy"
    out.mkdir()
    for f in banking.iterdir():
        (out / f.name).write_bytes(f.read_bytes())
    (tmp_path / "myrewards.py").write_text(
        "from verimut.rewards import formula\n\n"
        "@formula('half')\n"
        "def half(checks, initial, c):\n"
        "    return 0.5 * all(checks.values())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "verimut.cli", "report", str(out), "--rewards", "myrewards", "--procredit-c", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    per_cell = json.loads((out / "rewards.json").read_text())
    assert per_cell["banking/user_task_0:control"] == {
        "canopy": 1.0,
        "entropy-preserving": 1.0,
        "half": 0.5,
        "procredit": 3.0,
    }
    bad = verimut("report", str(out), "--rewards", "no_such_module_here")
    assert bad.returncode == 2 and "cannot import reward module 'no_such_module_here'" in bad.stderr
    assert verimut("report", str(out), "--procredit-c", "0").returncode == 2
