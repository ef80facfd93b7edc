"""The classification rule, case by case and for every combination of facts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verimut.engine.classify import Outcome, classify

CASES = [
    # control, refused, delivered, verdict, same_as_reference -> outcome
    ((True, False, True, True, True), Outcome.CONTROL_PASS),
    ((True, False, True, False, True), Outcome.CONTROL_FAIL),
    ((False, True, False, None, False), Outcome.REFUSED),
    ((False, False, False, True, False), Outcome.INCOMPLETE),
    ((False, False, True, None, False), Outcome.ERROR),
    ((False, False, True, True, True), Outcome.HARMLESS),
    ((False, False, True, False, True), Outcome.FALSE_REJECT),
    ((False, False, True, True, False), Outcome.FALSE_ACCEPT),
    ((False, False, True, False, False), Outcome.REJECTED),
]


@pytest.mark.parametrize(("facts", "outcome"), CASES)
def test_the_rule_on_each_case(facts, outcome):
    control, refused, delivered, verdict, same = facts
    got = classify(control=control, refused=refused, delivered=delivered, verdict=verdict, same_as_reference=same)
    assert got is outcome


@given(st.booleans(), st.booleans(), st.booleans(), st.sampled_from([True, False, None]), st.booleans())
def test_a_false_accept_needs_a_delivered_edit_a_pass_and_a_different_end_state(
    control, refused, delivered, verdict, same
):
    outcome = classify(control=control, refused=refused, delivered=delivered, verdict=verdict, same_as_reference=same)
    is_fa = outcome is Outcome.FALSE_ACCEPT
    assert is_fa == (not control and not refused and delivered and verdict is True and not same)
    if control and not refused:
        assert outcome in (Outcome.CONTROL_PASS, Outcome.CONTROL_FAIL, Outcome.ERROR)
    else:
        assert outcome not in (Outcome.CONTROL_PASS, Outcome.CONTROL_FAIL)


@given(st.booleans(), st.booleans(), st.sampled_from([True, False, None]), st.booleans())
def test_an_alternative_run_is_judged_by_its_verdict_once_the_oracle_confirms_it(refused, delivered, verdict, same):
    outcome = classify(
        control=False, refused=refused, delivered=delivered, verdict=verdict, same_as_reference=same, alternative=True
    )
    scored = not refused and delivered and verdict is not None
    assert (outcome is Outcome.ALT_PASS) == (scored and verdict is True and same)
    assert (outcome is Outcome.FALSE_REJECT) == (scored and verdict is False and same)
    # One that ends elsewhere is no alternative: refused, never a finding either way.
    if scored and not same:
        assert outcome is Outcome.REFUSED
    assert outcome not in (Outcome.FALSE_ACCEPT, Outcome.REJECTED, Outcome.HARMLESS)
    assert (outcome is Outcome.ALT_PASS) == (
        classify(control=False, refused=refused, delivered=delivered, verdict=verdict, same_as_reference=same)
        is Outcome.HARMLESS
    )


@given(st.booleans(), st.sampled_from([True, False, None]), st.booleans(), st.booleans())
def test_an_obscure_end_is_never_a_finding_and_a_weak_pin_never_a_false_accept(delivered, verdict, alternative, weak):
    """Nothing the benchmark observes tells an obscure end from the reference's: no false accept (the effect is
    not shown to differ) and no false reject (the run is not shown to be the same). A weak pin's pass is apart."""
    obscure = classify(
        control=False,
        refused=False,
        delivered=delivered,
        verdict=verdict,
        same_as_reference=False,
        alternative=alternative,
        obscure=True,
        weak_pin=weak,
    )
    assert obscure not in (Outcome.FALSE_ACCEPT, Outcome.FALSE_REJECT, Outcome.WEAK_PIN_ACCEPT, Outcome.ALT_PASS)
    moved = classify(
        control=False, refused=False, delivered=delivered, verdict=verdict, same_as_reference=False, weak_pin=weak
    )
    if delivered and verdict is True:
        assert moved is (Outcome.WEAK_PIN_ACCEPT if weak else Outcome.FALSE_ACCEPT)


@given(st.sampled_from([True, False, None]), st.booleans(), st.booleans())
def test_a_null_run_passed_on_a_task_with_nothing_to_do_is_no_vacuous_verifier(verdict, nothing, same):
    """Issue 41 1b: the start state already satisfies the task (its reference changes nothing, says nothing, asks
    nothing): the null run's pass is right, counted apart; everywhere else it is a vacuous verifier."""
    got = classify(
        control=False,
        refused=False,
        delivered=True,
        verdict=verdict,
        same_as_reference=same,
        null_run=True,
        nothing_to_do=nothing,
    )
    if verdict is None:
        assert got is Outcome.ERROR
    elif not verdict:
        assert got is Outcome.REJECTED
    else:
        assert got is (Outcome.NOTHING_TO_DO if nothing else Outcome.VACUOUS)
    assert not got.is_finding or got is Outcome.VACUOUS
