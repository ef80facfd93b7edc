"""Issue 41's AgentDojo rules on a plug-in benchmark (tests/chatbench.py), through the real command line:

- 1a: a repeated call on a task graded from the call trace is judged by the suite's reads, as on any task;
- 1b: the null run on a task with nothing to do is `nothing_to_do`, out of the vacuous count;
- 1c: a weak pin moved to a value naming another subject than the instruction names is a false accept;
- 6: the repair closes trace effects with checks over the run's write calls, and rejects no correct run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import verimut

BENCH = "tests.chatbench:benchmark"


def _rows(out: Path) -> dict[str, dict]:
    return {r["cell_id"]: r for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def chat(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("chat") / "audit"
    result = verimut("audit", BENCH, "--out", str(out), "-q")
    assert result.returncode == 1, result.stderr  # its false accepts
    return out


def test_a_repeated_call_on_a_trace_graded_task_is_judged_by_the_reads(chat):
    rows = _rows(chat)
    assert json.loads((chat / "manifest.json").read_text())["telemetry"] == ["requests"]
    # add_ann's verifier grades the calls, add_bob's the state: the same repeat, the same outcome, for the same
    # reason (list_user_channels shows each channel once on both ends)
    for task in ("chat/add_ann", "chat/add_bob"):
        row = rows[f"{task}:extra"]
        assert row["outcome"] == "harmless", row
        assert row["evidence"]["unobserved_through"] == 5
        assert "not observably" in row["reason"]
    # a repeat a read does show is still a false accept on the trace-graded side too
    assert rows["chat/reunion:extra"]["outcome"] == "false_accept"
    # and a trace-graded verifier that fails another value is right (rejected, never a false reject)
    assert rows["chat/add_ann:wrong-value:1.channel"]["outcome"] == "rejected"


def test_a_null_run_on_a_task_with_nothing_to_do_is_counted_apart(chat):
    rows = _rows(chat)
    rent, note = rows["chat/rent:null-run"], rows["chat/note:null-run"]
    assert rent["outcome"] == "nothing_to_do" and "nothing to do" in rent["reason"]
    assert note["outcome"] == "vacuous"
    s = json.loads((chat / "summary.json").read_text())
    assert s["null_runs"] == {"graded": 6, "vacuous": 1, "nothing_to_do": 1}
    assert [v["task"] for v in s["vacuous"]] == ["chat/note"]
    text = (chat / "summary.md").read_text()
    assert "**1 of 6 verifiers give full reward to doing nothing (apart: 1 task(s) with nothing to do" in text


def test_a_value_naming_another_subject_is_no_weak_pin(chat):
    row = _rows(chat)["chat/reunion:wrong-value:2.title"]
    assert row["outcome"] == "false_accept", row
    assert row["evidence"]["detail"]["to"] == "Ads campaign deadline"
    assert "weak_pin" not in row["evidence"]["detail"]
    assert "not a weak pin: the instruction names 'family reunion'" in row["evidence"]["edit"]
    s = json.loads((chat / "summary.json").read_text())
    assert row["cell_id"] in {f["cell_id"] for f in s["false_accepts"]} and not s.get("weak_pins")


def test_the_repair_closes_trace_effects_with_checks_over_the_calls(chat):
    result = verimut("repair", str(chat), "--benchmark", BENCH)
    assert result.returncode == 0, result.stderr
    r = json.loads((chat / "repair" / "summary.json").read_text())
    assert r["still_accepted"] == [] and r["new_false_rejects"] == []
    assert r["controls"] == r["controls_still_passing"] and r["alternatives"] == r["alternatives_still_passing"] > 0
    assert r["harmless"] == r["harmless_still_passing"]
    tasks = {t["task"]: t for t in r["tasks"]}
    # an invitation to another address ends in the reference's very state: only the calls tell them apart
    invite = tasks["chat/invite"]
    assert {"tool": "invite_user", "arg": "email", "values": ["dora@example.com"]} in invite["checks"]
    assert invite["caught"]["chat/invite:wrong-value:0.email"] == [
        "invite_user: email 'ann@example.com', expected 'dora@example.com'"
    ]
    # a page posted again grows the request log this task's verifier grades, which the checks' diff leaves out
    post = tasks["chat/post"]
    assert {"tool": "post_page", "count": 1} in post["checks"]
    assert post["caught"]["chat/post:extra"] == ["post_page: called 2 times, expected 1"]
    assert r["trace_checks"] == 2
    module = (chat / "repair" / "repaired_verifiers.py").read_text()
    assert "CallsWith('invite_user', 'email', ['dora@example.com'])," in module
    assert "CallsExactly('post_page', 1)," in module
