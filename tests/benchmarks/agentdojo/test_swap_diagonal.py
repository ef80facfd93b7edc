"""The swap census's diagonal (each task's control) takes the verdict the manifest's declared-field check already
took on an equal end of the same run (declared.OwnVerdict), and asks the verifier where the ends differ.

Slack's tasks: each has a read flag or log to flip, so the check takes a verdict for every one of them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
import pytest

from verimut.core.benchmark import Adapter
from verimut.core.records import Manifest
from verimut.core.replay import replay
from verimut.core.run import Run, Verdict
from verimut.engine import manifest as manifest_mod
from verimut.engine.declared import OwnVerdict
from verimut.engine.scorer import Scorer
from verimut.oracle import state as oracle

pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")

TASKS = [f"slack/user_task_{i}" for i in (0, 1, 2, 4)]


@pytest.fixture(scope="module")
def census(agentdojo: Adapter) -> tuple[Manifest, dict[str, OwnVerdict]]:
    own: dict[str, OwnVerdict] = {}
    return manifest_mod.build(agentdojo, TASKS, (), arm="swap", verdicts=own), own


class Counting:
    """The adapter's benchmark, counting the verifier calls verimut makes."""

    def __init__(self, bench: Any) -> None:
        self.bench = bench
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bench, name)

    def verify(self, episode: Any, run: Run) -> Verdict:
        self.calls.append(episode.task.ID)
        return self.bench.verify(episode, run)


def counted(adapter: Adapter) -> tuple[Adapter, list[str]]:
    inner = Counting(adapter.bench)
    return dataclasses.replace(adapter, bench=inner, verify_reading=None), inner.calls


def diagonal(adapter: Adapter, m: Manifest, own: dict[str, OwnVerdict]) -> dict[str, dict[str, Any]]:
    scorer = Scorer(adapter, m, own)
    out = {}
    for cell in (c for c in m.cells if c.is_control):
        row = msgspec.to_builtins(scorer.score(cell))
        row.pop("seconds")
        out[cell.cell_id] = row
    return out


def test_the_check_takes_each_tasks_verdict_on_its_own_reference_end(agentdojo, census):
    m, own = census
    assert sorted(own) == TASKS
    for task, taken in own.items():
        again = replay(agentdojo, task, m.tasks[task].reference)
        assert taken.digest == oracle.digest(again.end, m.ignore_for(task))
        assert taken.verdict == agentdojo.verify(again.episode, m.tasks[task].reference)


def test_the_diagonal_takes_the_taken_verdict_and_records_the_same_row(agentdojo, census):
    m, own = census
    adapter, calls = counted(agentdojo)
    taken = diagonal(adapter, m, own)
    assert calls == []  # no verifier call for a control whose end the check graded
    asked = diagonal(adapter, m, {})
    assert len(calls) == len(TASKS)
    assert taken == asked
    assert all(row["outcome"] == "control_pass" and row["evidence"].get("reads") is None for row in taken.values())


def test_an_end_that_differs_from_the_checked_one_is_graded_again(agentdojo, census):
    m, own = census
    adapter, calls = counted(agentdojo)
    # A verdict the verifier would not give, on an end this replay does not reach: it must not be taken.
    wrong = {t: OwnVerdict("0" * 16, Verdict(not o.verdict.passed, "not this end")) for t, o in own.items()}
    rows = diagonal(adapter, m, wrong)
    assert len(calls) == len(TASKS)
    assert rows == diagonal(dataclasses.replace(agentdojo, verify_reading=None), m, {})


def test_the_fault_arm_takes_no_verdict_from_its_manifest(agentdojo):
    own: dict[str, OwnVerdict] = {}
    manifest_mod.build(agentdojo, TASKS[:1], ["claim-only"], verdicts=own)
    assert own == {}
