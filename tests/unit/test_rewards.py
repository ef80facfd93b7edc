"""Rewards: the three formulas, their registry, and what confirmed false accepts earn on a real audit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verimut.findings import rewards

names = st.sampled_from("abcde")
checks = st.dictionaries(names, st.booleans(), min_size=1)


def test_formulas_on_several_checks_by_hand():
    run = {"a": True, "b": False, "c": True}
    start = {"a": False, "b": False, "c": True}
    assert rewards.canopy(run, start, 0.5) == 0.0
    assert rewards.entropy_preserving(run, start, 0.5) == pytest.approx(2 / 3)
    # a and b failed initially; a passes now: progress 1/2
    assert rewards.procredit(run, start, 0.5) == pytest.approx(0.25)
    assert rewards.procredit({"a": True, "b": True, "c": True}, start, 0.2) == pytest.approx(1.2)


def test_one_boolean_verdict_reduces_every_formula_to_it():
    for verdict in (True, False):
        got = rewards.of({"verdict": verdict}, {"verdict": False}, 0.5)
        assert got["canopy"] == got["entropy-preserving"] == float(verdict)
        assert got["procredit"] == (1.5 if verdict else 0.0)


@given(checks, checks, st.floats(0.01, 10))
def test_formula_bounds(run, start, c):
    assert 0 <= rewards.canopy(run, start, c) <= rewards.entropy_preserving(run, start, c) <= 1
    assert rewards.canopy(run, start, c) <= rewards.procredit(run, start, c) <= 1 + c


@given(checks, checks, checks, st.floats(0.01, 10))
def test_for_any_c_means_for_every_positive_c(edit, control, start, c):
    if rewards.for_any_c(edit, control, start):
        assert rewards.procredit(edit, start, c) >= rewards.procredit(control, start, c) - 1e-12
