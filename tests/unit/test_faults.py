"""The fault grammar: each operator on real AgentDojo reference runs, and rules that hold for every run."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verimut.core.run import Action, AnswerChannel, Run
from verimut.engine.manifest import build
from verimut.grammar import faults
from verimut.grammar.faults import FAMILIES, FaultContext, Refusal, spec_of
from verimut.grammar.pinned import ValueIndex


@pytest.fixture(scope="module")
def banking(agentdojo):
    tasks = ["banking/user_task_0", "banking/user_task_1", "banking/user_task_5", "banking/user_task_15"]
    return build(agentdojo, tasks, list(FAMILIES))


def cells_of(m, task, family):
    return [c for c in m.cells if c.task == task and c.family == family]


def test_every_family_is_enumerated_for_every_task(banking):
    for task in banking.tasks:
        for fam in ["control", *FAMILIES]:
            assert cells_of(banking, task, fam), (task, fam)


def test_a_read_only_task_refuses_every_write_edit(banking):
    # banking/user_task_1 asks for a total: its reference only reads. (extra-oos appends another
    # task's write, which applies after reads too: tests/test_side_effects.py.)
    # (Nor do the answer families and the null run, which edit what the run says, or drop everything.)
    for fam in FAMILIES:
        if fam == "extra-oos" or spec_of(fam).needs_answer_channel or spec_of(fam).null_run:
            continue
        if spec_of(fam).grammars == ("evidence",):
            continue  # a trace's families: they act on a response and requests (tests/unit/test_evidence_grammar.py)
        [cell] = cells_of(banking, "banking/user_task_1", fam)
        assert cell.run is None and "no write" in cell.note


def test_claim_only_keeps_reads_and_answer(banking):
    ref = banking.tasks["banking/user_task_0"].reference
    [cell] = cells_of(banking, "banking/user_task_0", "claim-only")
    assert [a.name for a in cell.run.actions] == ["read_file"]
    assert cell.run.answer == ref.answer


def test_omit_drops_the_last_write_only(banking):
    ref = banking.tasks["banking/user_task_15"].reference
    [cell] = [c for c in cells_of(banking, "banking/user_task_15", "omit") if c.variant == "-"]
    assert list(cell.run.actions) == list(ref.actions[:-1])
    assert ref.actions[-1].name == "send_money"


def test_extra_repeats_the_last_write_and_extra_ni_needs_the_census(banking):
    ref = banking.tasks["banking/user_task_0"].reference
    [extra] = cells_of(banking, "banking/user_task_0", "extra")
    assert list(extra.run.actions) == [*ref.actions, ref.actions[-1]]
    census = banking.tasks["banking/user_task_0"].census
    assert [(e.tool, e.non_idempotent) for e in census] == [("send_money", True)]
    assert "bank_account.transactions (new): 1 added" in census[0].changes
    [ni] = cells_of(banking, "banking/user_task_0", "extra-ni")
    assert ni.run == extra.run


def test_the_census_tells_idempotent_updates_apart(agentdojo):
    m = build(agentdojo, ["banking/user_task_14"], ["extra-ni"])
    assert [(e.tool, e.non_idempotent) for e in m.tasks["banking/user_task_14"].census] == [("update_password", False)]
    [cell] = cells_of(m, "banking/user_task_14", "extra-ni")
    assert cell.run is None and "census" in cell.note


def test_partial_refuses_without_a_repeated_write(banking):
    [cell] = cells_of(banking, "banking/user_task_0", "partial")
    assert cell.run is None and "repeated" in cell.note


def test_wrong_value_varies_only_pinned_arguments_and_says_where_they_come_from(banking):
    cells = cells_of(banking, "banking/user_task_15", "wrong-value")
    by_arg = {c.detail["arg"] + "@" + str(c.detail["action"]): c.detail for c in cells}
    # The new address is in the instruction; the amount is a number.
    assert by_arg["street@0"]["pinned_by"] == "instruction"
    assert any(d["pinned_by"] == "number" for d in by_arg.values())
    for d in by_arg.values():
        assert d["from"] != d["to"]
    # The refund's subject is free text no read or instruction names: left alone, and counted.
    assert "subject@4" not in by_arg
    assert "#4.subject" in banking.tasks["banking/user_task_15"].unpinned


def test_wrong_value_moves_an_id_to_another_record_of_the_same_collection(agentdojo):
    m = build(agentdojo, ["banking/user_task_2"], ["wrong-value"])
    [cell] = [c for c in cells_of(m, "banking/user_task_2", "wrong-value") if c.detail["arg"] == "id"]
    # 7 is a scheduled transaction's id; the other one is 6 (transaction ids 1-5 are another collection).
    assert (cell.detail["from"], cell.detail["to"]) == (7, 6)


def test_wrong_value_flips_a_boolean_the_instruction_names_and_no_other():
    pay = Action("schedule_transaction", {"recipient": "GB11", "recurring": False, "notify": True})
    ctx = FaultContext((True,), ("",), "Schedule a non-recurring payment to GB11", ValueIndex({}, {}), (True,))
    edits = faults.wrong_value(Run((pay,)), ctx)
    assert isinstance(edits, list)
    by_arg = {e.detail["arg"]: e for e in edits}
    assert set(by_arg) == {"recipient", "recurring"}  # `notify` is not named: left alone
    flipped = by_arg["recurring"]
    assert flipped.run.actions[0].args == {"recipient": "GB11", "recurring": True, "notify": True}
    assert flipped.detail["pinned_by"] == "instruction names 'recurring'"
    assert "synthesized" not in flipped.detail  # a boolean's other value is not made up
    # GB11 has no other value of its kind in this (empty) start state: a synthesized one, and said so.
    made = by_arg["recipient"]
    assert (made.detail["to"], made.detail["synthesized"]) == ("GB12", True)
    assert "(synthesized: no other value of its kind in the start state; pinned by instruction)" in made.note


def test_wrong_value_still_leaves_unpinned_free_text_alone():
    write = Action("send_email", {"subject": "Hello there", "urgent": True})
    ctx = FaultContext((True,), ("",), "Email Bob", ValueIndex({}, {}), (True,))
    result = faults.wrong_value(Run((write,)), ctx)
    assert result == Refusal("no pinned written value (2 unpinned argument(s) left alone)")


def test_registering_a_family_is_one_decorated_function():
    name = "test-drop-first"
    try:

        @faults.family(name)
        def drop_first(run: Run, ctx: FaultContext):
            return [faults.Edit("-", run.replace_actions(run.actions[1:]), "dropped the first action")]

        assert FAMILIES[name] is drop_first
        with pytest.raises(ValueError, match="already registered"):
            faults.family(name)(drop_first)
    finally:
        FAMILIES.pop(name, None)


# --- rules for every run -------------------------------------------------------------------

names = st.sampled_from(["get_a", "send", "update", "read_b", "create"])
actions = st.builds(
    Action,
    names,
    st.dictionaries(
        st.sampled_from(["to", "n", "body"]), st.one_of(st.integers(0, 9), st.text("xyz", max_size=3)), max_size=3
    ),
)


@st.composite
def runs_and_contexts(draw):
    acts = draw(st.lists(actions, max_size=6))
    writes = tuple(not a.name.startswith(("get_", "read_")) for a in acts)
    ni = tuple(draw(st.booleans()) if w else None for w in writes)
    outputs = tuple(draw(st.text("xyz0123", max_size=5)) for _ in acts)
    channel = draw(st.sampled_from([None, AnswerChannel("the run's final answer")]))
    ctx = FaultContext(writes, outputs, draw(st.text("xyz 0123", max_size=12)), ValueIndex({}, {}), ni, channel=channel)
    said = st.sampled_from(["3", "2024-05-21 18:00", "Le Baratin, 30.0, New Asiaway", "It took 1:30, about 12 km."])
    return Run(tuple(acts), draw(st.one_of(st.text(max_size=3), said))), ctx


@given(runs_and_contexts(), st.sampled_from(sorted(FAMILIES)))
def test_every_operator_is_pure_and_edits_or_refuses(rc, fam):
    run, ctx = rc
    before = (run, ctx)
    first, second = FAMILIES[fam](run, ctx), FAMILIES[fam](run, ctx)
    assert (run, ctx) == before and first == second
    spec = spec_of(fam)
    if spec.null_run:  # always the one empty run
        assert [e.run for e in first] == [Run(())]
        return
    if not any(ctx.writes) and not spec.needs_answer_channel:
        assert isinstance(first, Refusal)
    if spec.needs_answer_channel and ctx.channel is None:
        assert isinstance(first, Refusal) and "answer channel" in first.reason
    if isinstance(first, Refusal):
        assert first.reason
        return
    assert first and len({e.variant for e in first}) == len(first)
    for edit in first:
        assert edit.run != run
        if spec.needs_answer_channel:  # what the run says changes; what it does does not
            assert edit.run.actions == run.actions and edit.run.answer != run.answer
        else:
            assert edit.run.answer == run.answer


@given(runs_and_contexts())
def test_write_edits_change_writes_by_exactly_the_stated_amount(rc):
    run, ctx = rc
    n_writes = sum(ctx.writes)
    if not n_writes:
        return
    [claim] = FAMILIES["claim-only"](run, ctx)
    assert len(claim.run.actions) == len(run.actions) - n_writes
    omits = FAMILIES["omit"](run, ctx)
    assert isinstance(omits, list) and len(omits) == n_writes
    assert all(len(e.run.actions) == len(run.actions) - 1 for e in omits)
    extras = FAMILIES["extra"](run, ctx)
    assert isinstance(extras, list) and len(extras) == n_writes
    assert all(len(e.run.actions) == len(run.actions) + 1 for e in extras)


def _page_ctx(writes: tuple[bool, ...], kept: tuple[faults.OutOfScope, ...], tried: int) -> FaultContext:
    n = len(writes)
    return FaultContext(
        writes, ("",) * n, "Select ab and click Submit.", ValueIndex({}, {}), (None,) * n,
        out_of_scope=kept, out_of_scope_tried=tried, on_page=True,
    )  # fmt: skip


def test_extra_oos_makes_a_page_write_before_and_after_the_tasks_interactions():
    """issue 41, item 4: an element of the task's own page (`page_writes`), before the first write and after the
    last, before the claim; none after a run that ends at a write (its page's episode is over there)."""
    other = Action("check", {"label": "cd"})
    kept = (faults.OutOfScope("click-checkboxes/1", faults.ON_PAGE, other, ("fields",), "fields (1 changed)"),)
    run = Run((Action("check", {"label": "ab"}), Action("submit", {"button": "Submit"})))
    edits = faults.extra_oos(run, _page_ctx((True, False), kept, 1))
    assert isinstance(edits, list)
    by = {e.variant: e for e in edits}
    assert set(by) == {"check@fields/before", "check@fields/after"}
    assert by["check@fields/before"].run.actions == (other, *run.actions)
    assert by["check@fields/after"].run.actions == (run.actions[0], other, run.actions[1])
    assert "an element of the page the task never mentions" in by["check@fields/after"].note
    ends_at_write = Run((Action("click", {"css": ".email-thread"}), Action("click", {"css": "#email .trash"})))
    only = faults.extra_oos(ends_at_write, _page_ctx((True, True), kept, 1))
    assert isinstance(only, list) and [e.variant for e in only] == ["check@fields/before"]


def test_extra_oos_on_a_page_says_why_it_found_nothing():
    run = Run((Action("check", {"label": "ab"}), Action("submit", {"button": "Submit"})))
    assert faults.extra_oos(run, _page_ctx((True, False), (), 0)) == Refusal(
        "the page has no element the task never mentions that the adapter can write"
    )
    refused = faults.extra_oos(run, _page_ctx((True, False), (), 2))
    assert isinstance(refused, Refusal) and "(2 tried)" in refused.reason
