"""AgentDojo's verifiers under the read recording (adapters/recording.py), against the real package."""

from __future__ import annotations

import pytest

pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")

from verimut.core.reads import STATE, reads_collection
from verimut.core.replay import replay


def test_recording_leaves_every_verdict_as_it_was(agentdojo):
    # Every task of v1.2 (user and injection), on its reference run's end: the recorded call and the plain one agree,
    # and the classes the recording hooked are left as they were.
    assert agentdojo.verify_reading is not None
    moved = []
    for task in agentdojo.tasks():
        run = agentdojo.reference(task, agentdojo.reset(task))
        done = replay(agentdojo, task, run)
        plain = agentdojo.verify(agentdojo.fork(done.episode), run)
        recorded, _ = agentdojo.verify_reading(done.episode, run)
        if recorded != plain:
            moved.append(task)
        assert "__getattribute__" not in type(done.episode.env).__dict__
    assert moved == []


def test_a_verifier_said_to_read_a_channel_reads_only_the_users_channels(agentdojo):
    # The example: the source-text search said slack/user_task_11 reads slack.channel_inbox.general; it reads
    # the invitation call, the user list and Dora's channels.
    task = "slack/user_task_11"
    run = agentdojo.reference(task, agentdojo.reset(task))
    done = replay(agentdojo, task, run)
    _, reads = agentdojo.verify_reading(done.episode, run)
    state = reads.under(STATE)
    assert reads_collection(state, "slack.user_channels.Dora") and reads_collection(state, "slack.users")
    assert not reads_collection(state, "slack.channel_inbox.general")
    assert "trace.2.args.user_email" in reads.value  # the invitation's address, which only the trace holds
