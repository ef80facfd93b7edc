"""Rank sensitivity's error budget, counted from a real AgentDojo audit (the pure parts: tests/unit/test_rank.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest
import typer
from typer.testing import CliRunner

from conftest import verimut
from verimut.cli import rank as rank_command
from verimut.core.errors import AuditError
from verimut.findings import rank

app = typer.Typer()
app.command()(rank_command.command)


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


# --- the budget from a real audit ---------------------------------------------------------------------------------


@pytest.fixture
def banking(banking_audit) -> Path:
    return banking_audit  # the session's banking audit (conftest.py): read it, or copy it to change it


def recount(out: Path) -> tuple[int, int, int, int]:
    """The budget's counts, straight from the ledger's lines."""
    rows = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines() if line.strip()]
    controls = {r["task"]: r["outcome"] for r in rows if r["family"] == "control"}
    edits = [r for r in rows if r["family"] != "control" and r["outcome"] != "refused"]
    eligible = {r["task"] for r in edits if controls.get(r["task"]) == "control_pass"}
    accepted = {r["task"] for r in edits if r["outcome"] == "false_accept"} & eligible
    verdicts = [o for o in controls.values() if o in ("control_pass", "control_fail")]
    return len(accepted), len(eligible), verdicts.count("control_fail"), len(verdicts)


def test_budget_from_a_real_audit(banking):
    b = rank.budget_from_audit(banking)
    assert (b.alpha_k, b.alpha_n, b.beta_k, b.beta_n) == recount(banking)
    assert b.alpha == b.alpha_k / b.alpha_n > 0  # banking has confirmed false accepts
    assert b.beta_n == 25 and b.beta == 0  # every banking control passes: 16 user tasks, 9 injection tasks
    assert b.alpha_n == 25  # extra-oos gives even a read-only task an edit, so every task is eligible
    assert b.source == str(banking)


def test_command_with_a_real_audit_shows_the_envelope(banking, scores, tmp_path):
    out = tmp_path / "rank.json"
    result = run(scores, "--audit", banking, "--json", out)
    assert result.exit_code == 0, result.output
    b = rank.budget_from_audit(banking)
    assert f"({b.alpha_k} of {b.alpha_n} eligible tasks" in result.output
    assert "illustrative" in result.output and "exchangeable" in result.output
    assert "Overlap does not show a rank error" in result.output
    report = msgspec.json.decode(out.read_bytes(), type=rank.Report)
    observed, env = report.analyses
    assert (env.alpha, env.beta) == (
        rank.clopper_pearson_upper(b.alpha_k, b.alpha_n),
        rank.clopper_pearson_upper(b.beta_k, b.beta_n),
    )
    assert env.alpha > observed.alpha and env.beta > observed.beta
    # A given value replaces the audit's, and the envelope goes with its counts.
    result = run(scores, "--audit", banking, "--beta", "0.1")
    assert result.exit_code == 0, result.output
    assert "beta 0.1000 (given)" in result.output and "no envelope" in result.output


def test_a_half_scored_audit_is_refused(banking, tmp_path):
    partial = tmp_path / "partial"
    shutil.copytree(banking, partial)
    lines = (partial / "cells.jsonl").read_text().splitlines(keepends=True)
    (partial / "cells.jsonl").write_text("".join(lines[:-1]))
    with pytest.raises(AuditError, match="1 of .* cells are not scored yet"):
        rank.budget_from_audit(partial)


def test_a_swap_census_is_refused(tmp_path):
    out = tmp_path / "swap"
    result = verimut("swap", "agentdojo", "--task", "banking/user_task_0", "--out", str(out), "-q")
    assert result.returncode in (0, 1), result.stderr
    with pytest.raises(AuditError, match="rank needs a fault-arm audit"):
        rank.budget_from_audit(out)
