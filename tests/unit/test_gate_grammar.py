"""The CI gate's grammar (--fail-on), pure: parsing, rendering, firing, the names each arm knows."""

from __future__ import annotations

import operator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verimut.cli import gate
from verimut.cli.gate import Comparison, Gate, GateError
from verimut.engine.arms import FAULT, SWAP_ARM


def test_examples_parse_to_what_they_say():
    assert gate.parse("false_accept>0") == Gate(((Comparison(None, "false_accept", ">", 0),),))
    assert gate.parse(" extra-ni.false_accept >= 2 , error>0 or wrong-value.rejected!=3 and harmless<1") == Gate(
        (
            (Comparison("extra-ni", "false_accept", ">=", 2),),
            (Comparison(None, "error", ">", 0),),
            (Comparison("wrong-value", "rejected", "!=", 3), Comparison(None, "harmless", "<", 1)),
        )
    )
    assert gate.parse("never") == Gate(())
    assert str(gate.parse(gate.DEFAULT)) == gate.DEFAULT


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("", "is empty"),
        ("   ", "is empty"),
        ("false_accept>>0", "expected a whole number at column 14"),
        ("false_accept=0", "unexpected '=' at column 13 (compare with ==)"),
        ("false_accept>0 or", "expected a count name such as 'false_accept' at the end"),
        ("false_accept>0 and and error>1", "column 20"),
        ("false_accept>-1", "unexpected '-' at column 14"),
        ("false_accept>0.5", "expected ',', 'or' or 'and' at column 15 ('.')"),
        ("false_accept 0", "expected a comparison"),
        ("extra.>0", "expected a count name after the scope at column 7"),
        ("a.b.c>0", "expected a comparison"),
        ("never or false_accept>0", "expected a count name"),
        ("false_accept>0 false_reject>0", "expected ',', 'or' or 'and' at column 16 ('false_reject')"),
    ],
)
def test_a_bad_expression_is_one_line_naming_the_place(text, names):
    with pytest.raises(GateError) as e:
        gate.parse(text)
    assert names in str(e.value)
    assert "\n" not in str(e.value)


_words = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True).filter(lambda w: w not in ("or", "and", "never"))
_comparisons = st.builds(
    Comparison, st.none() | _words, _words, st.sampled_from(gate.OPS), st.integers(min_value=0, max_value=10**6)
)
_gates = st.lists(st.lists(_comparisons, min_size=1, max_size=3).map(tuple), min_size=1, max_size=4).map(
    lambda parts: Gate(tuple(parts))
)


@given(_gates, st.sampled_from([" ", "", "  ", "\t"]), st.sampled_from([",", " or "]))
def test_rendering_and_parsing_round_trip(g, space, sep):
    assert gate.parse(str(g)) == g
    # The same gate with other spacing, and commas for "or", parses the same.
    spaced = sep.join(
        " and ".join(f"{space}{c.counter}{space}{c.op}{space}{c.value}{space}" for c in part) for part in g.any_of
    )
    assert gate.parse(spaced) == g


_OP = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne}


@given(_gates, st.data())
def test_a_gate_fires_exactly_when_some_part_holds_entirely(g, data):
    # Counts at, just under and just over each threshold (and some counters left out: 0).
    counts: dict = {}
    for c in g.comparisons:
        near = st.sampled_from([max(0, c.value - 1), c.value, c.value + 1])
        if data.draw(st.booleans()):
            counts.setdefault(c.scope, {})[c.count] = data.draw(near)

    def value(c):
        return counts.get(c.scope, {}).get(c.count, 0)

    expected = [part for part in g.any_of if all(_OP[c.op](value(c), c.value) for c in part)]
    fired = gate.fired(g, counts)
    assert len(fired) == len(expected)
    for line, part in zip(fired, expected):  # each line names the numbers that made it hold
        assert all(f"({c.counter} = {value(c)})" in line for c in part)


@given(st.text(max_size=40))
def test_any_text_parses_or_is_refused_in_one_line(text):
    try:
        g = gate.parse(text)
    except GateError as e:
        assert "\n" not in str(e).replace(repr(text), "")
    else:
        assert gate.parse(str(g)) == g


def test_names_are_checked_per_arm():
    fault = gate.Vocabulary(FAULT, ("control", "extra"))
    gate.check(gate.parse("extra.false_reject>0, error>1"), fault)
    with pytest.raises(GateError, match=r"no count 'acceptance' \(known: control_pass, "):
        gate.check(gate.parse("acceptance>0"), fault)
    with pytest.raises(GateError, match="'omit' in 'omit.false_accept' is not a fault family of this run"):
        gate.check(gate.parse("omit.false_accept>0"), fault)
    census = gate.Vocabulary(SWAP_ARM, ("banking",))
    gate.check(gate.parse("banking.acceptance>3 or false_accept>0 or accepted_effect_absent>0"), census)
    # No reference end state to equal in the census: harmless and false_reject do not exist there.
    for name in ("false_reject", "harmless"):
        with pytest.raises(GateError, match=f"the intent-swap census has no count '{name}'"):
            gate.check(gate.parse(f"{name}>0"), census)
    with pytest.raises(GateError, match="not a suite of this run"):
        gate.check(gate.parse("extra.false_accept>0"), census)


def test_census_counts_sum_rungs_and_name_confirmed_false_accepts():
    table = {
        "banking": {
            "control": {"cells": 3, "control_pass": 3},
            "0": {"cells": 2, "accepted_effect_absent": 1, "rejected": 1, "passed": 1, "valid": 2},
            "read-only": {"cells": 4, "accepted_effect_present": 2, "accepted_effect_absent": 1, "error": 1},
        },
        "slack": {"control": {"cells": 1, "control_fail": 1}},
    }
    counts = gate.swap_counts(table)
    assert counts["banking"]["false_accept"] == counts["banking"]["accepted_effect_absent"] == 2
    assert counts["banking"]["acceptance"] == 4
    assert counts[None]["control_fail"] == 1 and counts[None]["control_pass"] == 3 and counts[None]["error"] == 1
    assert counts["slack"]["acceptance"] == 0
