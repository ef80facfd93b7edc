"""Rewards on a real audit: what confirmed false accepts earn, and a user module's formula (the formulas: tests/unit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, verimut


@pytest.fixture
def banking(banking_audit) -> Path:
    return banking_audit  # the session's banking audit (conftest.py): read it, or copy it to change it


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
        "from verimut.findings.rewards import formula\n\n"
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
