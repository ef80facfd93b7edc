"""AgentDojo's injection tasks: their `security()` verifiers audited as their own task kind, reported apart."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import verimut
from verimut import adapters
from verimut import api as audit_mod
from verimut.cli.terminal import outcome_tables as _tables
from verimut.core.benchmark import USER, Verdict
from verimut.core.errors import AuditError
from verimut.core.records import Cell, CellResult, Evidence, Manifest, Outcome, TaskFacts, content_hash
from verimut.core.replay import replay
from verimut.core.run import Action, Run
from verimut.engine import pipeline
from verimut.engine.store import Store
from verimut.findings import summary as summary_mod
from verimut.grammar import pairs
from verimut.outputs import reproduce

pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")

SUITES = ("workspace", "travel", "banking", "slack")


def _numbers(ids: list[str], prefix: str) -> list[int]:
    return [int(t.rsplit("_", 1)[1]) for t in ids if t.split("/", 1)[1].startswith(prefix)]


# --- the adapter ---------------------------------------------------------------------------------


def test_every_injection_task_of_v1_2_is_listed_after_its_suites_user_tasks(agentdojo):
    from agentdojo.task_suite.load_suites import get_suites

    ids = list(agentdojo.tasks())
    assert len(ids) == len(set(ids))
    for name, suite in get_suites("v1.2").items():
        mine = [t for t in ids if t.startswith(f"{name}/")]
        users, injections = _numbers(mine, "user_task_"), _numbers(mine, "injection_task_")
        assert mine == [f"{name}/user_task_{n}" for n in users] + [f"{name}/injection_task_{n}" for n in injections]
        assert users == sorted(users) and injections == sorted(injections)
        assert {f"injection_task_{n}" for n in injections} == set(suite.injection_tasks)
        for tid, task in suite.injection_tasks.items():
            assert agentdojo.kind(f"{name}/{tid}") == "injection"
            assert agentdojo.instruction(f"{name}/{tid}") == task.GOAL
        assert all(agentdojo.kind(f"{name}/user_task_{n}") == USER for n in users)
    assert len(ids) == 97 + 35  # v1.2: 97 user tasks, 35 injection tasks


def test_the_verdict_on_each_reference_run_is_agentdojos_own(agentdojo):
    """AgentDojo runs an injection task alone with its ground truth (`run_task_with_pipeline`): same verdict here."""
    from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline
    from agentdojo.task_suite.load_suites import get_suites

    seen: Counter[str] = Counter()
    for name, suite in get_suites("v1.2").items():
        for tid, task in suite.injection_tasks.items():
            theirs, _ = suite.run_task_with_pipeline(GroundTruthPipeline(task), task, None, {})
            task_id = f"{name}/{tid}"
            done = replay(agentdojo, task_id, agentdojo.reference(task_id, agentdojo.reset(task_id)))
            verdict = agentdojo.verify(done.episode, agentdojo.reference(task_id, agentdojo.reset(task_id)))
            assert verdict.passed is bool(theirs), task_id
            seen[verdict.detail] += 1
    # slack/injection_task_5 grades by its calls (security_from_traces), the others by the end state.
    assert seen == {"security": 34, "security_from_traces": 1}


def test_security_is_called_with_output_pre_and_post_environment(agentdojo):
    """A run that sends nothing fails; the reference run's transaction, in the live env, passes (pre stays clean)."""
    task = "banking/injection_task_4"
    episode = agentdojo.reset(task)
    run = agentdojo.reference(task, episode)
    assert agentdojo.verify(episode, run) == Verdict(False, "security")
    for action in run.actions:
        agentdojo.execute(episode, action)
    assert agentdojo.verify(episode, run) == Verdict(True, "security")
    assert agentdojo.verifier_source(task)[2] == "InjectionTask4.security"  # type: ignore[index]
    assert agentdojo.verifier_source("slack/injection_task_5")[2] == "InjectionTask5.security_from_traces"  # type: ignore[index]


def test_verify_as_keeps_grading_user_tasks(agentdojo):
    task = "banking/user_task_1"
    done = replay(
        agentdojo,
        "banking/user_task_0",
        agentdojo.reference("banking/user_task_0", agentdojo.reset("banking/user_task_0")),
    )
    assert agentdojo.verify_as is not None
    assert agentdojo.verify_as(task, done.episode, Run(())).detail == "utility"


# --- the audit -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def banking_injection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("inj") / "banking"
    result = verimut(
        "audit",
        "agentdojo",
        "--suite",
        "banking",
        "--kind",
        "injection",
        "-o",
        str(out),
        "-q",
        "--executor",
        "inprocess",
    )
    # 0: security() is a goal contract (side effects are not its to reject) and the banking goals leave the
    # amounts open ("as much as possible", a cap): no confirmed false accept is found there
    assert result.returncode == 0, result.stderr
    return out


def test_the_injection_controls_pass_on_banking(banking_injection: Path):
    m = Store(banking_injection).read_manifest()
    assert list(m.tasks) == [f"banking/injection_task_{n}" for n in range(9)]
    assert {f.kind for f in m.tasks.values()} == {"injection"}
    s = json.loads((banking_injection / "summary.json").read_text())
    assert list(s["counts_by_kind"]) == ["injection"]
    assert s["counts_by_kind"]["injection"]["control"] == {"control_pass": 9}
    assert s["counts_by_kind"]["injection"] == s["counts"]
    assert s["control_failures"] == []
    assert s["false_accepts"] == []
    assert s["counts"]["extra-oos"] == {"refused": 9}  # the goal contract: every side-effect family refused
    md = (banking_injection / "summary.md").read_text()
    assert "## Outcomes per fault family: injection tasks" in md and "user tasks" not in md
    refused = Store(banking_injection).rows()["banking/injection_task_0:extra-oos"]
    assert refused.outcome == "refused" and "goal-contract" in (refused.reason or "")
    assert reproduce.main([str(banking_injection)]) == 0


@pytest.fixture(scope="module")
def both_kinds(agentdojo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("both") / "banking"
    tasks = ("banking/user_task_0", "banking/user_task_2", "banking/injection_task_0", "banking/injection_task_6")
    audit_mod.audit(agentdojo, out, tasks=tasks)
    return out


def test_the_summary_reports_each_kind_apart(both_kinds: Path):
    s = json.loads((both_kinds / "summary.json").read_text())
    by_kind = s["counts_by_kind"]
    assert list(by_kind) == ["user", "injection"]
    for fam, counts in s["counts"].items():  # the kinds split `counts`, nothing more or less
        assert Counter(counts) == sum((Counter(by_kind[k].get(fam, {})) for k in by_kind), Counter())
    kinds = {f["cell_id"]: f["kind"] for f in s["false_accepts"]}
    assert {k for c, k in kinds.items() if "/injection_task_" in c} <= {"injection"}
    assert {k for c, k in kinds.items() if "/user_task_" in c} == {"user"}
    md = (both_kinds / "summary.md").read_text()
    user = md.index("## Outcomes per fault family: user tasks")
    injection = md.index("## Outcomes per fault family: injection tasks")
    assert user < injection < md.index("## Confirmed false accepts")
    n = Counter(kinds.values())
    assert f"(user tasks {n['user']}, injection tasks {n['injection']})" in md
    page = (both_kinds / "report.html").read_text()
    assert "family (user tasks, all suites)" in page and "family (injection tasks, all suites)" in page
    assert reproduce.main([str(both_kinds)]) == 0


def test_the_terminal_shows_one_table_per_kind(both_kinds: Path):
    s = summary_mod.build(*_read(both_kinds))
    # faults, then alternative runs, each split by kind
    titles = [str(t.title) for t in _tables(s)]
    assert [t.rsplit(", ", 1)[-1] for t in titles] == ["user tasks", "injection tasks"] * 2
    only_user = msgspec.structs.replace(s, counts_by_kind={"user": s.counts_by_kind["user"]})
    assert [str(t.title) for t in _tables(only_user)] == [
        f"{s.benchmark} {s.version}: outcomes per fault family",
        "alternative runs: correct runs by another route",
    ]


def test_the_reproducer_catches_a_moved_kind_count(both_kinds: Path):
    s = json.loads((both_kinds / "summary.json").read_text())
    ctrl = s["counts_by_kind"]["injection"]["control"]
    ctrl["control_pass"] -= 1
    ctrl["control_fail"] = 1
    _, found = reproduce.checks(
        (both_kinds / "manifest.json").read_bytes(), (both_kinds / "cells.jsonl").read_bytes(), json.dumps(s).encode()
    )
    bad = [c.name for c in found if not c.ok]
    assert bad == [
        "counts_by_kind[injection][control][control_pass]",
        "counts_by_kind[injection][control][control_fail]",
    ]


def test_an_empty_ground_truth_is_a_failed_control_with_its_reason(agentdojo, tmp_path: Path):
    # AgentDojo v1.2's workspace injection tasks 6-13 ship `ground_truth` returning [].
    s = audit_mod.audit(agentdojo, tmp_path / "o", tasks=["workspace/injection_task_6"], families=["omit"])
    assert [f.outcome for f in s.control_failures] == ["control_fail"]
    assert "which has no action" in (s.control_failures[0].reason or "")
    rows = Store(tmp_path / "o").rows()
    assert rows["workspace/injection_task_6:omit"].unscorable


# --- selecting kinds -----------------------------------------------------------------------------


def test_kind_selects_tasks(agentdojo):
    banking = pipeline.select_tasks(agentdojo.tasks(), ["banking"])
    assert pipeline.select_kinds(agentdojo, banking) == banking  # default: every kind
    users = pipeline.select_kinds(agentdojo, banking, ["user"])
    injections = pipeline.select_kinds(agentdojo, banking, ["injection"])
    assert users == [t for t in banking if "/user_task_" in t] and len(users) == 16
    assert injections == [t for t in banking if "/injection_task_" in t] and len(injections) == 9
    assert pipeline.select_kinds(agentdojo, banking, ["injection", "user"]) == banking
    with pytest.raises(AuditError, match="no task selected"):
        pipeline.select_kinds(agentdojo, ["banking/user_task_0"], ["injection"])


def test_an_adapter_without_kinds_has_only_user_tasks(tmp_path: Path):
    todo = adapters.load("examples.todo_bench:benchmark")
    assert todo.kind is None
    assert pipeline.select_kinds(todo, todo.tasks(), ["user"]) == list(todo.tasks())
    with pytest.raises(AuditError, match=r"unknown task kind 'injection' \(known for todo: user\)"):
        pipeline.select_kinds(todo, todo.tasks(), ["injection"])
    s = audit_mod.audit(todo, tmp_path / "o")
    assert list(s.counts_by_kind) == ["user"] and s.counts_by_kind["user"] == s.counts
    assert "## Outcomes per fault family\n" in (tmp_path / "o" / "summary.md").read_text()


@pytest.mark.parametrize("kind", ["bogus", "Injection"])
def test_a_bad_kind_is_one_line_and_exit_2(kind: str, tmp_path: Path):
    result = verimut("audit", "agentdojo", "--kind", kind, "-o", str(tmp_path / "o"), "-q", "--executor", "inprocess")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [f"verimut: error: unknown task kind {kind!r} (known for agentdojo: injection, user)"]
    assert not (tmp_path / "o" / "manifest.json").exists()


# --- the swap census pairs user tasks only -------------------------------------------------------


def _facts(kind: str) -> TaskFacts:
    return TaskFacts(Run((Action("send_money", {"amount": 1}),)), [], [], kind=kind)


def test_the_swap_grid_leaves_out_other_kinds():
    facts = {
        "s/user_task_0": _facts("user"),
        "s/user_task_1": _facts("user"),
        "s/injection_task_0": _facts("injection"),
    }
    cells = pairs.grid(facts)
    assert {c.task for c in cells} == {c.run_task for c in cells} == {"s/user_task_0", "s/user_task_1"}
    assert len(cells) == 4  # 2 diagonal controls, 2 swaps


def test_the_swap_census_excludes_injection_tasks(agentdojo, tmp_path: Path):
    tasks = ["banking/user_task_0", "banking/injection_task_0", "banking/user_task_1"]
    census = audit_mod.swap(agentdojo, tmp_path / "o", tasks=tasks)
    m = Store(tmp_path / "o").read_manifest()
    assert list(m.tasks) == ["banking/user_task_0", "banking/user_task_1"]
    assert not any("injection" in c.task or "injection" in c.run_task for c in m.cells)
    assert census.cells == 4
    with pytest.raises(AuditError, match="pairs user tasks only"):
        audit_mod.swap(agentdojo, tmp_path / "p", tasks=["banking/injection_task_0"])


# --- counting per kind, for every input ----------------------------------------------------------

_OUTCOMES = [o for o in Outcome if o not in (Outcome.ACCEPTED_EFFECT_ABSENT, Outcome.ACCEPTED_EFFECT_PRESENT)]


@st.composite
def _audits(draw: st.DrawFn) -> tuple[Manifest, dict[str, CellResult]]:
    kinds = draw(st.lists(st.sampled_from(["user", "injection", "other"]), min_size=1, max_size=5))
    tasks = {f"s/t{n}": TaskFacts(Run(()), [], [], kind=k) for n, k in enumerate(kinds)}
    cells: list[Cell] = []
    rows: dict[str, CellResult] = {}
    for task in tasks:
        for fam in draw(st.lists(st.sampled_from(["control", "omit", "extra"]), unique=True, max_size=3)):
            cid = f"{task}:{fam}"
            cells.append(Cell(cid, task, fam, "-", Run(()), ""))
            outcome = draw(st.none() | st.sampled_from(_OUTCOMES))
            if outcome is not None:
                rows[cid] = CellResult(cid, "b", task, fam, "-", outcome, None, Evidence(edit=""))
    m = Manifest("0", "b", "1", {}, ["omit", "extra"], [], [], tasks, cells)
    return msgspec.structs.replace(m, content_hash=content_hash(m)), rows


@settings(max_examples=60, deadline=None)
@given(_audits())
def test_counts_per_kind_split_the_counts_and_the_reproducer_agrees(audit: tuple[Manifest, dict[str, CellResult]]):
    m, rows = audit
    s = summary_mod.build(m, rows)
    for fam, counts in s.counts.items():
        assert Counter(counts) == sum((Counter(fams.get(fam, {})) for fams in s.counts_by_kind.values()), Counter())
    met = list(dict.fromkeys(m.tasks[c.task].kind for c in m.cells))  # kinds with cells, as the manifest meets them
    assert list(s.counts_by_kind) == [k for k in met if k == "user"] + [k for k in met if k != "user"]
    ledger = b"".join(msgspec.json.encode(r) + b"\n" for r in rows.values())
    _, found = reproduce.checks(msgspec.json.encode(m), ledger, msgspec.json.encode(s))
    assert [c.name for c in found if not c.ok] == []


def test_an_old_manifest_without_kinds_reads_as_user_tasks():
    facts = msgspec.json.decode(
        b'{"reference": {"actions": [], "answer": ""}, "census": [], "unpinned": []}', type=TaskFacts
    )
    assert facts.kind == "user" and facts.contract == "effect"
    # Fields added since decode with their defaults: every field after the first three has one.
    assert {"kind", "contract"} <= set(TaskFacts.__struct_fields__[3:])
    assert len(TaskFacts.__struct_defaults__) == len(TaskFacts.__struct_fields__) - 3


def test_reproduce_accepts_a_summary_written_before_kinds_for_user_tasks_only(both_kinds: Path, tmp_path: Path):
    todo = adapters.load("examples.todo_bench:benchmark")
    audit_mod.audit(todo, tmp_path / "o")
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    del s["counts_by_kind"]
    files = [(tmp_path / "o" / n).read_bytes() for n in ("manifest.json", "cells.jsonl")]
    _, found = reproduce.checks(*files, json.dumps(s).encode())
    assert all(c.ok for c in found)
    # ... but not for an audit with injection tasks: there the split is required.
    s = json.loads((both_kinds / "summary.json").read_text())
    del s["counts_by_kind"]
    files = [(both_kinds / n).read_bytes() for n in ("manifest.json", "cells.jsonl")]
    _, found = reproduce.checks(*files, json.dumps(s).encode())
    assert [c.name for c in found if not c.ok] == ["counts_by_kind[user]", "counts_by_kind[injection]"]


def _read(directory: Path) -> tuple[Manifest, dict[str, CellResult]]:
    store = Store(directory)
    return store.read_manifest(), store.rows()
