"""The classification rule, case by case and for every combination of facts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from verimut.classify import Outcome, classify


def test_the_rule_on_each_case():
    assert (
        classify(control=True, refused=False, delivered=True, verdict=True, same_as_reference=True)
        is Outcome.CONTROL_PASS
    )
    assert (
        classify(control=True, refused=False, delivered=True, verdict=False, same_as_reference=True)
        is Outcome.CONTROL_FAIL
    )
    assert (
        classify(control=False, refused=True, delivered=False, verdict=None, same_as_reference=False) is Outcome.REFUSED
    )
    assert (
        classify(control=False, refused=False, delivered=False, verdict=True, same_as_reference=False)
        is Outcome.INCOMPLETE
    )
    assert (
        classify(control=False, refused=False, delivered=True, verdict=None, same_as_reference=False) is Outcome.ERROR
    )
    assert (
        classify(control=False, refused=False, delivered=True, verdict=True, same_as_reference=True) is Outcome.HARMLESS
    )
    assert (
        classify(control=False, refused=False, delivered=True, verdict=False, same_as_reference=True)
        is Outcome.FALSE_REJECT
    )
    assert (
        classify(control=False, refused=False, delivered=True, verdict=True, same_as_reference=False)
        is Outcome.FALSE_ACCEPT
    )
    assert (
        classify(control=False, refused=False, delivered=True, verdict=False, same_as_reference=False)
        is Outcome.REJECTED
    )


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
