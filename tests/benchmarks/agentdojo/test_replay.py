"""Replays that reuse a kept reference run (forked) end exactly where fresh replays do."""

from __future__ import annotations

import pytest

pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")

from verimut.core.replay import Replayer, replay
from verimut.engine import manifest as manifest_mod
from verimut.grammar.faults import FAMILIES
from verimut.oracle import state as oracle


@pytest.fixture(scope="module")
def slice_manifest(agentdojo):
    tasks = [t for t in agentdojo.tasks() if t.startswith(("banking/", "slack/"))][::2]
    return manifest_mod.build(agentdojo, tasks, list(FAMILIES))


def test_replayer_replays_match_fresh_ones_for_every_cell(agentdojo, slice_manifest):
    m = slice_manifest
    replayer = Replayer(agentdojo, {t: f.reference for t, f in m.tasks.items()}, keep=1)
    checked = 0
    for cell in m.cells:
        if cell.run is None:
            continue
        forked, fresh = replayer.replay(cell.task, cell.run), replay(agentdojo, cell.task, cell.run)
        assert forked.failed_at == fresh.failed_at, cell.cell_id
        assert forked.steps == fresh.steps, cell.cell_id
        assert oracle.compare(fresh.start, forked.start, m.ignore) == [], cell.cell_id
        assert oracle.compare(fresh.end, forked.end, m.ignore) == [], cell.cell_id
        checked += 1
    assert checked > 100


def test_a_replay_changed_afterwards_changes_no_other(agentdojo):
    task = "banking/user_task_0"
    run = agentdojo.reference(task, agentdojo.reset(task))
    replayer = Replayer(agentdojo, {task: run})
    first = replayer.replay(task, run)
    first.episode.env.bank_account.transactions.clear()  # what a verifier that writes could do
    first.episode.start.bank_account.balance = -1
    second = replayer.replay(task, run)
    assert second.episode.env.bank_account.transactions and second.episode.start.bank_account.balance != -1
    assert oracle.compare(replay(agentdojo, task, run).end, second.end, []) == []
