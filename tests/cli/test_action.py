"""action.yml: its audit step's script, run by bash as the runner would, against a reward file with a loophole:
it fails on findings, and passes once a baseline holds them (new findings only fail the job)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import ROOT, verimut

DATA = ROOT / "tests" / "data" / "rewards"


def _step(name: str) -> dict:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    return next(s for s in action["runs"]["steps"] if s.get("id") == name)


def _run_audit_step(cwd: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    step = _step("audit")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "GITHUB_OUTPUT": str(cwd / "github-output"),
        "TARGET": inputs["target"],
        "DATASET": inputs.get("dataset", ""),
        "BASELINE": inputs.get("baseline", ""),
        "FAIL_ON": inputs.get("fail-on", "false_accept>0"),
        "ARGS": inputs.get("args", ""),
    }
    return subprocess.run(["bash", "-ec", step["run"]], cwd=cwd, env=env, capture_output=True, text=True, check=False)


def test_the_action_fails_on_new_findings_and_passes_on_a_baseline(tmp_path):
    target = f"reward:{DATA / 'planted.py'}:contains"
    args = "--executor inprocess --family answer-hedge"
    first = _run_audit_step(tmp_path, target=target, dataset=str(DATA / "data.jsonl"), args=args)
    assert first.returncode == 1, first.stderr
    out = tmp_path / "verimut-out" / "action"
    assert (out / "summary.md").exists() and (tmp_path / "verimut-out" / "verimut.sarif").exists()
    assert (tmp_path / "github-output").read_text().strip() == "directory=verimut-out/action"
    baseline = verimut("baseline", str(out))
    assert baseline.returncode == 0, baseline.stderr
    (tmp_path / "verimut-baseline.json").write_text(baseline.stdout)
    again = _run_audit_step(
        tmp_path, target=target, dataset=str(DATA / "data.jsonl"), baseline="verimut-baseline.json", args=args
    )
    assert again.returncode == 0, again.stderr
