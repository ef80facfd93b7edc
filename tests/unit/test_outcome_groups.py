"""The outcome groupings, each one property of Outcome (core/records.py), with the outcomes each held before."""

from __future__ import annotations

import msgspec

from verimut.core.records import CellResult, Evidence, Outcome

O = Outcome


def members(flag: str) -> set[Outcome]:
    return {o for o in Outcome if getattr(o, flag)}


def test_each_grouping_holds_exactly_the_outcomes_its_callers_counted():
    # evidence.CONFIRMED, repair.CONFIRMED: a confirmed false accept (SARIF's results, the repair's targets).
    assert members("is_confirmed_false_accept") == {O.FALSE_ACCEPT, O.ACCEPTED_EFFECT_ABSENT}
    # evidence.FINDINGS, junit's failures: a finding against the verifier.
    assert members("is_finding") == {O.FALSE_ACCEPT, O.ACCEPTED_EFFECT_ABSENT, O.FALSE_REJECT, O.VACUOUS}
    # coverage.CONFIRMED: a graded run whose end state differs (for a side-effect family, a confirmed side effect).
    assert members("is_confirmed_change") == {O.REJECTED, O.FALSE_ACCEPT}
    # evidence.lines' and cell_view's "judged correct": the oracle found the run correct.
    assert members("is_judged_correct") == {O.FALSE_REJECT, O.ALT_PASS}
    # repair.CORRECT: a correct run the verifier passes.
    assert members("is_correct_pass") == {O.CONTROL_PASS, O.HARMLESS, O.ALT_PASS}
    # rank.py's controls with a verdict.
    assert members("is_control_verdict") == {O.CONTROL_PASS, O.CONTROL_FAIL}
    # swap.ACCEPTED, arms.py, gate.py: the swap census's acceptances.
    assert members("is_swap_acceptance") == {O.ACCEPTED_EFFECT_PRESENT, O.ACCEPTED_EFFECT_ABSENT}


def test_an_outcome_is_still_written_as_its_name():
    row = CellResult("t:extra", "b", "t", "extra", "-", Outcome.FALSE_ACCEPT, True, Evidence(edit="e"))
    assert b'"outcome":"false_accept"' in msgspec.json.encode(row)
    assert [o.value for o in Outcome] == [
        "control_pass",
        "control_fail",
        "refused",
        "incomplete",
        "harmless",
        "rejected",
        "false_accept",
        "false_reject",
        "error",
        "accepted_effect_present",
        "accepted_effect_absent",
        "alt_pass",
        "same_run",
        "weak_pin_accept",
        "vacuous",
        "nothing_to_do",
    ]


def test_doing_nothing_may_be_right_only_where_the_task_asks_nothing_and_its_reference_does_nothing():
    from verimut.core.records import TaskFacts
    from verimut.core.run import Run
    from verimut.oracle.state import CollectionDiff

    quiet = TaskFacts(reference=Run(()), census=[], unpinned=[])
    assert quiet.does_nothing
    assert not msgspec.structs.replace(quiet, question=True).does_nothing  # "What's a good summary ...?"
    assert not msgspec.structs.replace(quiet, reference_answer="You have 3.").does_nothing
    wrote = CollectionDiff("notes", added=[{"text": "x"}])
    assert not msgspec.structs.replace(quiet, effect=[wrote]).does_nothing
