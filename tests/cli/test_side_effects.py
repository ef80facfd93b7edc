"""The side-effect families: every write position (extra, extra-ni, omit) and out-of-scope writes (extra-oos).

On a small plug-in benchmark (tests/framebench.py) whose tasks write different collections and
whose verifiers check either their own record or the whole state; the pure operators on
contexts built here; rules that hold for every run (hypothesis); and AgentDojo banking's
existing cells, which the new variants must leave exactly as they were.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from framebench import FrameBench, FrameBenchNoFork
from verimut import adapters
from verimut.api import audit
from verimut.core.run import Action, Run
from verimut.engine.manifest import build
from verimut.engine.pipeline import select_families
from verimut.executors.inprocess import InProcess
from verimut.grammar import oos
from verimut.grammar.faults import FAMILIES, Edit, FaultContext, OutOfScope, Refusal, spec_of
from verimut.grammar.pinned import ValueIndex
from verimut.oracle import state as oracle

SIDE = ["extra", "extra-ni", "omit", "extra-oos"]
# The banking ledger as verimut 0.2.0 recorded it, before the side-effect families: every row must stay.
BEFORE = Path(__file__).parents[1] / "data" / "banking-ledger-0.2.0.json"


def ids(m, task, families=SIDE):
    return [c.cell_id for c in m.cells if c.task == task and c.family in families]


@pytest.fixture(scope="module")
def frame():
    return build(adapters.resolve(FrameBench()), FrameBench().tasks(), SIDE)


# --- every write position --------------------------------------------------------------------


def test_a_three_write_run_gets_a_variant_at_every_write_position(frame):
    # frame/three writes at 0, 2 and 3 (1 is a read); the census marks the two add_todo writes
    # non-idempotent and the setting idempotent. The last write keeps today's id.
    assert ids(frame, "frame/three", ["extra", "extra-ni", "omit"]) == [
        "frame/three:extra:at-0",
        "frame/three:extra:at-2",
        "frame/three:extra",
        "frame/three:extra-ni:at-0",
        "frame/three:extra-ni",
        "frame/three:omit:at-0",
        "frame/three:omit:at-2",
        "frame/three:omit",
    ]
    by_id = {c.cell_id: c for c in frame.cells}
    ref = frame.tasks["frame/three"].reference.actions
    assert by_id["frame/three:extra:at-2"].run.actions == (*ref[:3], ref[2], ref[3])
    assert by_id["frame/three:extra:at-2"].detail == {"position": 2, "tool": "add_todo"}
    assert by_id["frame/three:extra"].note == "repeated the last write, #3 set_setting"
    assert by_id["frame/three:extra-ni"].note == "repeated the last non-idempotent write, #2 add_todo"
    assert by_id["frame/three:extra-ni:at-0"].detail["census"] == "replaying it twice changes the state"
    assert by_id["frame/three:omit:at-0"].run.actions == ref[1:]
    assert by_id["frame/three:omit"].note == "dropped the last write, #3 set_setting"


def test_a_one_write_run_keeps_exactly_todays_cells(frame):
    assert ids(frame, "frame/todo", ["extra", "extra-ni", "omit"]) == [
        "frame/todo:extra",
        "frame/todo:extra-ni",
        "frame/todo:omit",
    ]


# --- out-of-scope writes ---------------------------------------------------------------------

EXPECTED_OOS = {
    # Each task's kept (tool, first collection) pairs, first candidate in the suite's order winning.
    "frame/todo": ["add_contact@contacts", "set_setting@settings", "add_todo@todos"],
    "frame/contact": ["add_todo@todos", "set_setting@settings"],
    # set_setting(lang) is kept (a field frame/theme leaves alone); set_setting(theme, light) is not.
    "frame/theme": ["add_todo@todos", "add_contact@contacts", "set_setting@settings"],
    "frame/three": ["add_todo@todos", "add_contact@contacts", "set_setting@settings"],
    "frame/call_bob": ["add_todo@todos", "set_setting@settings"],
    "frame/keep_light": ["add_todo@todos", "add_contact@contacts", "set_setting@settings"],
    "frame/count": ["add_todo@todos", "add_contact@contacts", "set_setting@settings"],
}


def test_extra_oos_keeps_one_variant_per_tool_and_collection_outside_the_tasks_effect(frame):
    for task, variants in EXPECTED_OOS.items():
        assert ids(frame, task, ["extra-oos"]) == [f"{task}:extra-oos:{v}" for v in variants], task
    [cell] = [c for c in frame.cells if c.cell_id == "frame/todo:extra-oos:add_contact@contacts"]
    ref = frame.tasks["frame/todo"].reference
    added = Action("add_contact", {"name": "bob", "phone": "555-0101"})
    assert cell.run == Run((*ref.actions, added), ref.answer)
    assert cell.detail == {
        "source_task": "frame/contact",
        "source_action": 0,
        "tool": "add_contact",
        "collection": "contacts",
        "touches": ["contacts"],
        "tried": 4,
    }
    assert cell.note == (
        "appended frame/contact's #0 add_contact(name='bob', phone='555-0101'): changes contacts (1 added)"
    )


def test_the_trial_drops_calls_that_raise_change_nothing_or_stay_inside_the_effect(frame):
    notes = [c.note for c in frame.cells if c.family == "extra-oos"]
    # update_contact(bob) raises wherever bob is missing; on frame/contact's end it changes bob,
    # whom frame/contact added (inside its effect): it is never kept.
    assert not any("update_contact" in n for n in notes)
    # set_setting(theme, light) changes nothing where the theme is light, and on frame/theme's end
    # it changes the field frame/theme sets (inside).
    assert not any("'light'" in n for n in notes)
    # A task's own write is the `extra` family's, never an out-of-scope candidate.
    own = [c for c in frame.cells if c.family == "extra-oos" and c.detail["source_task"] == c.task]
    assert own == []
    # How many candidates each task tried (the suite's writes but its own, each tool's until one is kept): the cost.
    tried = {t: f.out_of_scope_tried for t, f in frame.tasks.items()}
    assert tried == {
        "frame/todo": 4,
        "frame/contact": 3,
        "frame/theme": 4,
        "frame/three": 4,
        "frame/call_bob": 3,
        "frame/keep_light": 4,
        "frame/count": 4,
    }


def test_without_fork_the_trial_replays_and_finds_the_same_cells(frame):
    bench = FrameBenchNoFork()
    resolved = adapters.resolve(bench)
    assert resolved.fork is None
    m = build(resolved, bench.tasks(), SIDE)
    assert m.cells == frame.cells  # each try a full replay here, the same candidates tried
    assert {t: f.out_of_scope_tried for t, f in m.tasks.items()} == {
        t: f.out_of_scope_tried for t, f in frame.tasks.items()
    }
    # frame/todo: add_todo(call mum), set_setting(lang, fr) and set_setting(theme, light) are
    # skipped once add_todo and set_setting have a kept candidate.
    assert m.tasks["frame/todo"].out_of_scope_tried == 4


def test_the_library_comes_from_the_whole_suite_whatever_tasks_are_audited(frame):
    bench = adapters.resolve(FrameBench())
    m = build(bench, ["frame/todo"], ["extra-oos"])
    assert ids(m, "frame/todo") == ids(frame, "frame/todo", ["extra-oos"])


def test_extra_oos_refuses_when_no_other_task_has_a_write():
    bench = FrameBench(tasks=["frame/todo", "frame/count"])
    m = build(adapters.resolve(bench), bench.tasks(), ["extra-oos"])
    [cell] = [c for c in m.cells if c.cell_id == "frame/todo:extra-oos"]
    assert cell.run is None and cell.note == "no other task in the suite has a write (other than this run's own)"
    assert m.tasks["frame/todo"].out_of_scope_tried == 0


def test_extra_oos_runs_by_default_in_the_api_grammar():
    assert "extra-oos" in select_families()
    assert "extra-oos" not in select_families(grammar="form")


def test_an_own_record_verifier_passes_out_of_scope_writes_and_a_whole_state_one_rejects_them(tmp_path):
    bench = adapters.resolve(FrameBench(whole=("frame/contact", "frame/count")))
    audit(bench, tmp_path, families=SIDE, executor=InProcess())
    rows = {r["cell_id"]: r for r in map(json.loads, (tmp_path / "cells.jsonl").read_text().splitlines())}
    oos_rows = {cid: r for cid, r in rows.items() if r["family"] == "extra-oos"}
    # frame/keep_light's own record is the theme, which set_setting(theme, dark) changes: even
    # the own-record verifier sees that one (the reference leaves the theme as it was, so the
    # change is outside its effect, and inside what its verifier reads).
    noticed = {"frame/keep_light:extra-oos:set_setting@settings"}
    assert len(oos_rows) == sum(map(len, EXPECTED_OOS.values()))
    for cid, row in oos_rows.items():
        whole = row["task"] in ("frame/contact", "frame/count")
        assert row["outcome"] == ("rejected" if whole or cid in noticed else "false_accept"), cid
    row = rows["frame/todo:extra-oos:add_contact@contacts"]
    [diff] = row["evidence"]["differs_from_reference"]
    assert diff["collection"] == "contacts" and diff["counts"] == "1 added"
    assert diff["added"] == [{"key": "bob", "record": {"id": "bob", "phone": "555-0101"}}]
    assert row["evidence"]["edit"].startswith("appended frame/contact's #0 add_contact(")
    # The every-position duplicates: a non-idempotent one is a confirmed side effect too.
    assert rows["frame/three:extra:at-0"]["outcome"] == "false_accept"
    assert rows["frame/three:omit:at-2"]["outcome"] == "rejected"


# --- the pure parts --------------------------------------------------------------------------


def _ctx(writes, ni=None, out_of_scope=(), tried=0):
    n = len(writes)
    ni = ni if ni is not None else tuple(True if w else None for w in writes)
    return FaultContext(tuple(writes), ("",) * n, "", ValueIndex({}, {}), tuple(ni), None, tuple(out_of_scope), tried)


def _oos(task, i, name, coll, **args):
    return OutOfScope(task, i, Action(name, args), (coll,), f"{coll} (1 added)")


def test_the_extra_oos_operator_appends_the_first_candidate_per_tool_and_collection():
    run = Run((Action("read"), Action("w", {"a": 1})), "ok")
    found = (
        _oos("s/b", 0, "send", "tx", to="x"),
        _oos("s/c", 1, "send", "tx", to="y"),  # same (tool, collection): the first wins
        _oos("s/c", 2, "send", "users", to="z"),
    )
    edits = FAMILIES["extra-oos"](run, _ctx([False, True], out_of_scope=found, tried=5))
    assert isinstance(edits, list)
    assert [e.variant for e in edits] == ["send@tx", "send@users"]
    assert edits[0].run == Run((*run.actions, Action("send", {"to": "x"})), "ok")
    assert edits[0].detail["source_task"] == "s/b" and edits[0].detail["tried"] == 5
    assert edits[0].note == "appended s/b's #0 send(to='x'): changes tx (1 added)"


def test_the_extra_oos_operator_says_why_it_refuses():
    run = Run((Action("w"),))
    none = FAMILIES["extra-oos"](run, _ctx([True]))
    assert none == Refusal("no other task in the suite has a write (other than this run's own)")
    inside = FAMILIES["extra-oos"](run, _ctx([True], tried=3))
    assert isinstance(inside, Refusal)
    assert inside.reason.startswith("no write of another task in the suite changes anything outside this task's effect")


def _diff(coll, added=(), removed=(), changed=()):
    return oracle.CollectionDiff(coll, list(added), list(removed), [oracle.Change(k, f) for k, f in changed])


def test_outside_tells_a_side_effect_from_a_change_inside_the_tasks_effect():
    effect = [
        _diff("tx", added=[{"key": "8", "record": {"id": 8, "to": "a"}}]),
        _diff("user", changed=[("street", {"value": ("x", "y")})]),
    ]
    # Another collection, another record of the same collection, another field: outside.
    assert oos.outside([_diff("files", added=[{"key": "f", "record": {}}])], effect) == ["files"]
    assert oos.outside([_diff("tx", added=[{"key": "9", "record": {"id": 9, "to": "b"}}])], effect) == ["tx"]
    assert oos.outside([_diff("user", changed=[("password", {"value": ("p", "q")})])], effect) == ["user"]
    # The same field set to another value, or the same record re-added under a new id: inside.
    assert oos.outside([_diff("user", changed=[("street", {"value": ("y", "z")})])], effect) == []
    assert oos.outside([_diff("tx", added=[{"key": "9", "record": {"id": 9, "to": "a"}}])], effect) == []
    assert oos.outside([], effect) == []


def test_the_library_keeps_each_distinct_write_once_per_suite_and_candidates_leave_out_the_tasks_own():
    w = Action("w", {"n": 1})
    runs = {"a/1": Run((Action("r"), w)), "a/2": Run((w, Action("v"))), "b/1": Run((w,)), "plain": Run((w,))}
    writes = {"a/1": [False, True], "a/2": [True, True], "b/1": [True], "plain": [True]}
    lib = oos.library(runs, writes)
    assert {s: [(c.source_task, c.source_action, c.action.name) for c in cs] for s, cs in lib.items()} == {
        "a": [("a/1", 1, "w"), ("a/2", 1, "v")],
        "b": [("b/1", 0, "w")],
        "": [("plain", 0, "w")],
    }
    assert [c.action.name for c in oos.candidates("a/2", runs["a/2"], lib)] == []
    assert [c.action.name for c in oos.candidates("a/1", runs["a/1"], lib)] == ["v"]


# --- rules for every run -----------------------------------------------------------------------

run_actions = st.lists(
    st.builds(Action, st.sampled_from(["a", "b", "c"]), st.dictionaries(st.just("n"), st.integers(0, 2), max_size=1)),
    min_size=1,
    max_size=7,
)


@st.composite
def runs_with_positions(draw):
    acts = draw(run_actions)
    writes = tuple(draw(st.booleans()) for _ in acts)
    ni = tuple(draw(st.booleans()) if w else None for w in writes)
    return Run(tuple(acts), "done"), _ctx(writes, ni)


def _position(edit: Edit, positions: list[int]) -> int:
    return positions[-1] if edit.variant == "-" else int(edit.variant.removeprefix("at-"))


@given(runs_with_positions())
def test_every_position_edit_inserts_one_duplicate_or_drops_one_write_at_the_named_position(rc):
    run, ctx = rc
    acts = list(run.actions)
    for fam, positions in (
        ("extra", ctx.write_positions()),
        ("omit", ctx.write_positions()),
        ("extra-ni", [i for i, ni in enumerate(ctx.non_idempotent) if ni]),
    ):
        edits = FAMILIES[fam](run, ctx)
        if not positions:
            assert isinstance(edits, Refusal)
            continue
        assert isinstance(edits, list)
        assert [e.variant for e in edits] == [*(f"at-{k}" for k in positions[:-1]), "-"]
        for edit in edits:
            k = _position(edit, positions)
            assert k in positions
            want = [*acts[: k + 1], acts[k], *acts[k + 1 :]] if fam != "omit" else [*acts[:k], *acts[k + 1 :]]
            assert list(edit.run.actions) == want and edit.run.answer == run.answer
            if edit.variant != "-":
                assert edit.detail["position"] == k and edit.detail["tool"] == acts[k].name


# --- AgentDojo banking: the existing cells are untouched -----------------------------------------


def test_banking_keeps_every_existing_cell_exactly_and_adds_only_new_ones(agentdojo, tmp_path):
    stored = json.loads(BEFORE.read_text())
    tasks = sorted({r["task"] for r in stored["ledger"]})
    audit(agentdojo, tmp_path, tasks=tasks, executor=InProcess())
    now = {}
    for line in (tmp_path / "cells.jsonl").read_text().splitlines():
        row = json.loads(line)
        row.pop("seconds")
        now[row["cell_id"]] = row
    old = {r["cell_id"]: r for r in stored["ledger"]}
    # Issue 26 changed what some cells conclude: a run another cell already has is scored there (same_run), an
    # injection task's goal contract refuses side effects, and new records are diffed by content ("(new)").
    # Every other stored cell keeps its outcome and verdict.
    kept = {
        cid: (r["outcome"], r["verdict"])
        for cid, r in old.items()
        if cid in now and now[cid]["outcome"] not in ("same_run", "weak_pin_accept") and "/injection_task_" not in cid
    }
    # the value the task never asks for (pinned.py's example, a read's date): reported apart now; the VAT payment's
    # subject moved to 'New year gift' names another subject than the instruction's (issue 41): a false accept
    weak = {cid for cid, r in now.items() if r["outcome"] == "weak_pin_accept"}
    assert weak == {"banking/user_task_15:wrong-value:4.date"}
    vat = now["banking/user_task_11:wrong-value:1.subject"]
    assert vat["outcome"] == "false_accept" and "other_subject" in vat["evidence"]["detail"]
    assert {cid: (now[cid]["outcome"], now[cid]["verdict"]) for cid in kept} == kept
    assert len(kept) >= len(old) * 0.8
    new = sorted(set(now) - set(old))
    # new: the side-effect families (issue 15), the alternative runs and the boolean wrong-value
    # reaches now that the instruction names it (issue 16)
    assert all(
        cid.split(":")[1] == "extra-oos"
        or ":at-" in cid
        or spec_of(cid.split(":")[1]).is_alternative
        or spec_of(cid.split(":")[1]).needs_answer_channel  # the answer channel's (issue 29)
        or spec_of(cid.split(":")[1]).null_run
        for cid in new
        if cid != "banking/user_task_6:wrong-value:1.recurring"
    )
    assert now["banking/user_task_6:wrong-value:1.recurring"]["evidence"]["detail"]["pinned_by"] == (
        "instruction names 'recurring'"
    )
    assert "banking/user_task_15:extra:at-0" in new and "banking/user_task_15:omit:at-2" in new
    assert "banking/user_task_0:extra-oos:send_money@bank_account.transactions" in new
