"""reasoning-gym, for real: its datasets made by the package, each graded by its own unmodified `score_answer`.

The default tier audits three datasets through the command line (seconds); the whole audit of every dataset
(about 40 s on two cores) is `slow`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

reasoning_gym = pytest.importorskip(
    "reasoning_gym", reason="reasoning-gym is not installed: scripts/install-reasoning-gym.sh installs it"
)

from conftest import verimut
from verimut import adapters

SUITES = ["game_of_life_halting", "basic_arithmetic", "letter_jumble"]


def test_the_adapter_makes_each_dataset_s_entries_and_scores_with_its_own_score_answer():
    bench = adapters.load("reasoning-gym", options={"entries": "2"})
    tasks = bench.tasks()
    assert "basic_arithmetic/0" in tasks and "basic_arithmetic/2" not in tasks
    assert not any(t.startswith("composite/") for t in tasks)  # needs a list of datasets: left out, named
    assert "composite" in bench.provenance()["left_out"]
    assert "boxnet" in bench.provenance()["no_reference"]  # its entries have no answer
    made = reasoning_gym.create_dataset("basic_arithmetic", size=2, seed=42)
    assert bench.instruction("basic_arithmetic/1") == made[1]["question"]
    episode = bench.reset("basic_arithmetic/1")
    run = bench.reference("basic_arithmetic/1", episode)
    assert run.answer == f"<answer>{made[1]['answer']}</answer>" and bench.verify(episode, run).reward == 1.0


def test_three_datasets_through_the_command_line(tmp_path):
    args = [f"--suite={s}" for s in SUITES]
    result = verimut("audit", "reasoning-gym", *args, "--option", "entries=3", "-o", str(tmp_path), "-q")
    assert result.returncode == 1, result.stderr  # false accepts found
    rows = [json.loads(line) for line in (tmp_path / "cells.jsonl").read_text().splitlines()]
    controls = [r for r in rows if r["family"] == "control"]
    assert len(controls) == 9 and all(r["outcome"] == "control_pass" for r in controls)
    # game_of_life_halting's score_answer compares bool(answer) with bool("False"): any non-empty reply is paid.
    gol = {r["family"] for r in rows if r["task"].startswith("game_of_life_halting") and r["outcome"] == "false_accept"}
    assert {"answer-other", "answer-spray", "answer-shotgun"} <= gol
    # basic_arithmetic compares the number exactly: no wrong answer is paid.
    arithmetic = [r for r in rows if r["task"].startswith("basic_arithmetic") and r["outcome"] == "false_accept"]
    assert not arithmetic, arithmetic
    summary = json.loads((tmp_path / "summary.json").read_text())
    numbers = summary["reward_numbers"]
    assert numbers["game_of_life_halting"]["lazy_policy_reward"] == 1.0
    assert numbers["basic_arithmetic"]["false_pass_ceiling"] < 1.0


def test_an_audit_resumes_in_another_process_though_some_datasets_draw_in_hash_order(tmp_path):
    # word_ladder and ransom_note draw in a set's order (string hashes differ per process); codeio/1's reference
    # code calls numpy's unseeded random. A first audit and its resumption in a process with another hash seed, each
    # drawing afresh (no cache), must agree on every task, and the irreproducible entry is left out, named.
    args = [
        "--suite=word_ladder",
        "--suite=ransom_note",
        "--suite=codeio",
        "--option",
        "entries=2",
        "-o",
        str(tmp_path / "out"),
    ]
    cmd = [sys.executable, "-m", "verimut.cli", "audit", "reasoning-gym", *args, "-q"]
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "XDG_CACHE_HOME": str(tmp_path / f"cache{seed}")}
        result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, check=False)
        assert result.returncode in (0, 1), result.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert "codeio/1" in manifest["provenance"]["not_reproducible"]
    assert "codeio/0" in manifest["tasks"] and "codeio/1" not in manifest["tasks"]
    assert "word_ladder/1" in manifest["tasks"] and "ransom_note/1" in manifest["tasks"]


@pytest.mark.slow
def test_every_dataset(tmp_path):
    result = verimut("audit", "reasoning-gym", "-o", str(tmp_path), "-q", timeout=1800)
    assert result.returncode == 1, result.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert len(summary["reward_numbers"]) >= 100
