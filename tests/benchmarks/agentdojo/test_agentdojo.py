"""The AgentDojo adapter against the real package: controls, telemetry, masks, and outcomes on real tasks."""

from __future__ import annotations

import pytest

pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")

from verimut.core.replay import replay
from verimut.core.run import Action
from verimut.engine.manifest import build
from verimut.engine.scorer import Scorer
from verimut.oracle import state as oracle


def test_every_v1_2_reference_run_passes_its_own_verifier(agentdojo):
    # User tasks; the injection tasks' own verifiers are tests/test_injection.py's.
    tasks = [t for t in agentdojo.tasks() if agentdojo.kind(t) == "user"]
    assert len(tasks) == 97 and {t.split("/")[0] for t in tasks} == {"workspace", "travel", "banking", "slack"}
    failed = []
    for task in tasks:
        run = agentdojo.reference(task, agentdojo.reset(task))
        done = replay(agentdojo, task, run)
        if done.failed_at is not None or not agentdojo.verify(done.episode, run).passed:
            failed.append(task)
    assert failed == []


def test_reset_is_a_clean_start_every_time(agentdojo):
    task = "banking/user_task_0"
    run = agentdojo.reference(task, agentdojo.reset(task))
    first = replay(agentdojo, task, run)
    again = agentdojo.reset(task)
    assert agentdojo.snapshot(again) == first.start != first.end


def test_reads_that_change_state_only_touch_telemetry(agentdojo):
    ep = agentdojo.reset("workspace/user_task_0")
    before = agentdojo.snapshot(ep)
    agentdojo.execute(ep, Action("get_unread_emails"))
    after = agentdojo.snapshot(ep)
    assert oracle.compare(before, after, []) != []  # the read flags flipped
    assert oracle.compare(before, after, agentdojo.telemetry) == []
    ep = agentdojo.reset("slack/user_task_0")
    before = agentdojo.snapshot(ep)
    agentdojo.execute(ep, Action("get_webpage", {"url": "www.informations.com"}))
    assert oracle.compare(before, agentdojo.snapshot(ep), agentdojo.telemetry) == []


def test_wall_clock_stamps_are_found_and_masked(agentdojo):
    m = build(agentdojo, ["workspace/user_task_35", "workspace/user_task_13", "workspace/user_task_8"], ["extra"])
    # create_file/append_to_file stamp last_modified, send_email stamps timestamp.
    assert "cloud_drive.files[*].last_modified" in m.masks
    assert "inbox.emails[*].timestamp" in m.masks


def test_an_error_string_is_not_an_effect_and_a_raise_is_incomplete(agentdojo):
    ep = agentdojo.reset("slack/user_task_2")
    step = agentdojo.execute(ep, Action("invite_user_to_slack", {"user": "Alice", "user_email": "a@b.c"}))
    assert step.error is not None and "ValueError" in step.error


def score(agentdojo, task, families):
    m = build(agentdojo, [task], families)
    scorer = Scorer(agentdojo, m)
    return {c.cell_id: scorer.score(c) for c in m.cells}


def test_outcomes_on_real_tasks(agentdojo):
    rows = score(agentdojo, "banking/user_task_0", ["omit", "extra", "partial"])
    assert rows["banking/user_task_0:control"].outcome == "control_pass"
    assert rows["banking/user_task_0:omit"].outcome == "rejected"
    assert rows["banking/user_task_0:partial"].outcome == "refused"
    fa = rows["banking/user_task_0:extra"]
    assert fa.outcome == "false_accept" and fa.verdict is True
    [d] = fa.evidence.differs_from_reference
    # a new transaction: its id is assigned in creation order, so new records are compared by content, apart
    assert d.collection == "bank_account.transactions (new)" and d.counts == "1 added"
    assert d.added[0]["recipient"] == "UK12345678901234567890"
    assert "utility()" in fa.reason


def test_a_verifier_that_ignores_the_write_accepts_a_run_without_it(agentdojo):
    # banking/user_task_5's utility looks for a transaction that is in the start state already.
    rows = score(agentdojo, "banking/user_task_5", ["claim-only"])
    row = rows["banking/user_task_5:claim-only"]
    assert row.outcome == "false_accept"
    assert row.evidence.differs_from_reference[0].counts == "1 removed"


def test_an_idempotent_repeat_is_harmless_and_a_failed_delivery_incomplete(agentdojo):
    assert score(agentdojo, "banking/user_task_14", ["extra"])["banking/user_task_14:extra"].outcome == "harmless"
    row = score(agentdojo, "slack/user_task_2", ["extra"])["slack/user_task_2:extra"]
    assert row.outcome == "incomplete" and "raised" in row.reason


def test_a_workspace_frame_check_rejects_a_duplicate_email(agentdojo):
    rows = score(agentdojo, "workspace/user_task_13", ["extra"])
    assert rows["workspace/user_task_13:extra"].outcome in ("rejected", "incomplete")


def test_unknown_version_and_task_are_refused():
    from verimut.adapters.agentdojo import AgentDojo
    from verimut.core.errors import AuditError

    with pytest.raises(AuditError, match="unknown AgentDojo version"):
        AgentDojo("v0.9")
    with pytest.raises(AuditError, match="unknown AgentDojo task"):
        AgentDojo().reset("banking/user_task_999")


def test_why_missed_names_what_the_verifier_reads(agentdojo):
    # UserTask8 diffs the whole environment but only asks that the addresses were added somewhere.
    assert "diff-based frame check" in agentdojo.explain("workspace/user_task_8", ["calendar.events"])
    assert "not how many" in agentdojo.explain("banking/user_task_0", ["bank_account.transactions"])
    assert "never reads slack.user_inbox.Eve" in agentdojo.explain("slack/user_task_20", ["slack.user_inbox.Eve"])


def test_the_adapter_loads_no_model_client_and_agentdojo_still_finds_its_pipeline():
    # In a fresh interpreter: the adapter defers agentdojo.agent_pipeline's __init__ (the model clients) and the
    # google-genai client's module (tool_execution takes a constant from it), and the names they define still
    # load, for real, when AgentDojo's own code asks for them.
    import subprocess
    import sys

    code = (
        "import sys; from verimut import adapters; b = adapters.load('agentdojo'); "
        "print(sorted(m for m in ('anthropic', 'openai', 'cohere', 'google.genai') if m in sys.modules)); "
        "from agentdojo.agent_pipeline.tool_execution import EMPTY_FUNCTION_NAME as e; print(repr(e)); "
        "from agentdojo.agent_pipeline import GroundTruthPipeline, AgentPipeline, GoogleLLM; "
        "print(GroundTruthPipeline.__module__, 'anthropic' in sys.modules, 'google.genai' in sys.modules); "
        "import agentdojo.agent_pipeline.llms.google_llm as g; print(g.EMPTY_FUNCTION_NAME == e, GoogleLLM is g.GoogleLLM)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "'<empty-function-name>'"  # the constant read off google_llm's source, before it runs
    assert out[2] == "agentdojo.agent_pipeline.ground_truth_pipeline True True"
    assert out[3] == "True True"
