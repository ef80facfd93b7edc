"""The intent-swap census's rungs, pure: symmetric, and as defined (on real tasks: tests/cli/test_swap.py)."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verimut import __version__
from verimut.core import forms
from verimut.core.errors import AuditError
from verimut.core.records import Manifest
from verimut.core.run import Action, Run
from verimut.engine.manifest import TaskFacts
from verimut.findings import swap
from verimut.grammar import pairs
from verimut.oracle.state import CollectionDiff

names = st.sampled_from(["read", "send", "update", "delete"])
runs = st.lists(st.builds(Action, names, st.dictionaries(st.sampled_from("abc"), st.integers(0, 2))), max_size=3)
writes = st.lists(st.sampled_from(["x.rows", "y.rows", "z"]), unique=True, max_size=3)


def facts(actions: list[Action], changed: list[str]) -> TaskFacts:
    return TaskFacts(Run(tuple(actions)), [], [], effect=[CollectionDiff(c, added=[{}]) for c in changed])


@given(runs, writes, runs, writes)
def test_rungs_are_symmetric_and_follow_their_definitions(a, wa, b, wb) -> None:
    i, j = facts(a, wa), facts(b, wb)
    r, _ = swap.rung(i, j)
    assert r == swap.rung(j, i)[0]
    if [x.name for x in a] == [y.name for y in b]:
        assert r == "0"
    elif not wa or not wb:
        assert r == "read-only"
    else:
        assert r == ("1" if set(wa) == set(wb) else "2" if set(wa) & set(wb) else "3")


def test_ids_without_a_suite_are_one_suite_and_prefixed_ids_pair_within_theirs() -> None:
    """AppWorld's ids ("venmosend_1") have no "/": every ordered pair is a cell; AgentDojo's stay per suite."""
    run = facts([Action("send", {})], ["x.rows"])
    flat = swap.grid(dict.fromkeys(["a_1", "a_2", "b_1"], run))
    assert {swap.suite_of(c.task) for c in flat} == {""} and len(flat) == 9
    assert {(c.task, c.run_task) for c in flat} == {
        (i, j) for i in ("a_1", "a_2", "b_1") for j in ("a_1", "a_2", "b_1")
    }
    prefixed = swap.grid(dict.fromkeys(["s/u1", "s/u2", "t/u1"], run))
    assert {(c.task, c.run_task) for c in prefixed} == {
        ("s/u1", "s/u1"),
        ("s/u1", "s/u2"),
        ("s/u2", "s/u1"),
        ("s/u2", "s/u2"),
        ("t/u1", "t/u1"),
    }
    assert [swap.suite_title(s) for s in ("", "banking")] == ["all tasks", "banking"]


def _form(fields: dict[str, str], table: str) -> TaskFacts:
    steps = [Action(forms.SET_FIELD, {"field": f, "value": v}) for f, v in fields.items()]
    return facts([*steps, Action(forms.SUBMIT)], [table])


def test_form_tasks_are_twins_only_when_they_set_the_same_fields() -> None:
    """Every form step is a set_field: two configurations of one form are twins when their fields match."""
    a = _form({"short_description": "disk", "impact": "1 - High"}, "incident")
    assert swap.rung(a, _form({"short_description": "mail", "impact": "3 - Low"}, "incident"))[0] == "0"
    assert swap.rung(a, _form({"short_description": "mail", "urgency": "3 - Low"}, "incident"))[0] == "1"
    assert swap.rung(a, _form({"short_description": "mail"}, "problem"))[0] == "3"


def _census(tasks: dict[str, TaskFacts]) -> Manifest:
    return Manifest("0", "b", "1", {}, [swap.SWAP], [], [], tasks, swap.grid(tasks), arm=swap.SWAP)


@given(st.lists(st.tuples(runs, writes), min_size=1, max_size=4))
def test_the_stored_census_leaves_runs_out_and_reading_puts_back_the_facts_own(tasks) -> None:
    m = _census({f"s/t{n}": facts(a, w) for n, (a, w) in enumerate(tasks)})
    kept = pairs.stored(m)
    assert all(c.run is None and c.note == "" and "start" not in c.detail for c in kept.cells)
    back = pairs.expanded(msgspec.json.decode(msgspec.json.encode(kept), type=Manifest))
    assert back == msgspec.json.decode(msgspec.json.encode(m), type=Manifest)  # what the file held before
    # one Run per task, shared by its column: the memory of a million cells is not a million runs
    assert all(c.run is back.tasks[c.run_task].reference for c in back.cells)


def test_a_census_cell_naming_a_task_without_facts_is_an_error() -> None:
    m = pairs.stored(_census({"s/a": facts([Action("send", {})], ["x"]), "s/b": facts([], [])}))
    broken = msgspec.structs.replace(m, tasks={"s/a": m.tasks["s/a"]})
    with pytest.raises(AuditError, match="task 's/b', which it has no facts of"):
        pairs.expanded(broken)


def test_the_store_writes_the_stored_form_and_reads_the_census_back_whole(tmp_path) -> None:
    from verimut.core.records import content_hash
    from verimut.engine.store import Store

    m = _census({"s/a": facts([Action("send", {"a": 1})], ["x"]), "s/b": facts([Action("read", {})], [])})
    m = msgspec.structs.replace(m, verimut=__version__)
    m = msgspec.structs.replace(m, content_hash=content_hash(pairs.stored(m)))
    store = Store(tmp_path / "o")
    store.write_manifest(m)
    raw = msgspec.json.decode((tmp_path / "o" / "manifest.json").read_bytes())
    assert all(c["run"] is None for c in raw["cells"]) and len(raw["cells"]) == 4
    assert store.read_manifest() == m
