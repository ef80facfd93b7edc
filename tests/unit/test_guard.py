"""guard.py and records.bounded: what enters from a plug-in, checked once; evidence values bounded."""

from __future__ import annotations

import datetime
import enum
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verimut.core import guard
from verimut.core.benchmark import Verdict, resolve
from verimut.core.errors import AuditError
from verimut.core.records import CAP, bounded
from verimut.core.run import Action, Run

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
plain_data = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
)


@given(plain_data)
def test_plain_data_passes_as_the_very_object(snapshot):
    assert guard.plain(snapshot, "b") is snapshot  # no copy where nothing needs converting


@given(st.lists(st.integers() | st.text(max_size=4), unique=True), st.randoms())
def test_a_set_is_read_as_a_list_of_its_members_in_one_order(members, rng):
    # One order whatever the insertion order (or hashing) was: by each member's canonical JSON form.
    shuffled = list(members)
    rng.shuffle(shuffled)
    a, b = guard.plain({"x": [set(members)]}, "b"), guard.plain({"x": [frozenset(shuffled)]}, "b")
    assert a == b and sorted(a["x"][0], key=repr) == sorted(members, key=repr)


def test_numpy_scalars_and_other_json_scalars_are_plain():
    class Colour(enum.Enum):
        RED = "red"

    when = datetime.datetime(2026, 12, 2)
    out = guard.plain({"n": np.int64(3), "f": np.float32(0.5), "b": np.bool_(True), "c": Colour.RED, "t": when}, "b")
    assert out == {"n": 3, "f": 0.5, "b": True, "c": Colour.RED, "t": when}
    assert type(out["n"]) is int and type(out["b"]) is bool


@pytest.mark.parametrize(
    ("snapshot", "where"),
    [
        ({"a": {1: "x"}}, "$.a[1] has a key of type int"),
        ({"a": [{"b": object()}]}, "$.a[0].b is a builtins.object"),
        ({"a": np.zeros(2)}, "$.a is a numpy.ndarray"),
    ],
)
def test_what_is_not_plain_data_is_named_where_it_sits(snapshot, where):
    with pytest.raises(AuditError, match=re.escape("snapshot is not plain data: " + where)):
        guard.plain(snapshot, "b")


def test_a_structure_that_contains_itself_is_refused_but_a_shared_one_is_not():
    shared = {"k": 1}
    assert guard.plain({"a": shared, "b": shared}, "b") == {"a": {"k": 1}, "b": {"k": 1}}
    loop: dict = {}
    loop["me"] = [loop]
    with pytest.raises(AuditError, match=r"\$\.me\[0\] contains itself"):
        guard.plain(loop, "b")


@pytest.mark.parametrize(
    ("passed", "problem"), [("no", "str ('no')"), (1, "int (1)"), (None, "NoneType (None)"), (0.0, "float (0.0)")]
)
def test_a_verdict_that_is_not_a_bool_is_a_verdict_error(passed, problem):
    with pytest.raises(guard.VerdictError, match=re.escape(f"Verdict.passed is {problem}")):
        guard.verdict(Verdict(passed))  # type: ignore[arg-type]
    with pytest.raises(guard.VerdictError, match=r"Verdict.checks\['c'\]"):
        guard.verdict(Verdict(True, checks={"c": passed}))  # type: ignore[dict-item]


def test_a_numpy_verdict_becomes_bools_and_a_good_one_passes_as_it_is():
    fixed = guard.verdict(Verdict(np.bool_(False), checks={"c": np.bool_(True)}))  # type: ignore[arg-type]
    assert fixed.passed is False and fixed.checks == {"c": True} and type(fixed.checks["c"]) is bool
    good = Verdict(True, "ok", {"c": False})
    assert guard.verdict(good) is good


def test_sys_exit_in_benchmark_code_is_an_ordinary_error():
    def leaves():
        raise SystemExit(4)

    with pytest.raises(guard.BenchmarkExit, match=r"called sys.exit\(4\)"):
        guard.call(leaves)


class _Consumes:
    name, version, telemetry = "c", "1", ()

    def provenance(self):
        return {}

    def tasks(self):
        return ["c/a"]

    def instruction(self, task):
        return ""

    def reset(self, task):
        return {"log": []}

    def reference(self, task, episode):
        return Run((Action("w", {"v": [1]}),))

    def execute(self, episode, action):
        episode["log"].append(action.args.pop("v"))  # consumes its arguments
        action.args["v2"] = "planted"
        from verimut.core.run import Step

        return Step("ok")

    def is_write(self, action):
        return True

    def snapshot(self, episode):
        return {"log": episode["log"]}

    def verify(self, episode, run):
        return Verdict(True)


def test_an_adapter_gets_a_copy_of_the_action():
    bench = resolve(_Consumes())  # type: ignore[arg-type]
    action = Action("w", {"v": [1]})
    episode = bench.reset("c/a")
    bench.execute(episode, action)
    assert action.args == {"v": [1]} and episode["log"] == [[1]]


@given(st.text(max_size=20), st.text(max_size=20))
def test_bounded_keeps_equal_values_equal_and_different_ones_different(x, y):
    a, b = "p" * CAP + "!" + x, "p" * CAP + "!" + y  # longer than the cap, and equal in the prefix kept
    assert len(bounded(a)) < CAP and (bounded(a) == bounded(b)) == (a == b)


@given(plain_data)
def test_bounded_leaves_small_values_as_they_are(value):
    assert bounded(value) is value


def _capped_whole(value):
    """records.bounded as its docstring says it, copying every container: the reference the fast one must equal."""
    if isinstance(value, str):
        return bounded(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_capped_whole(v) for v in value)
    if isinstance(value, dict):
        return {k: _capped_whole(v) for k, v in value.items()}
    return value


_long = st.text(max_size=3).map(lambda t: "q" * CAP + t)
_with_long = st.recursive(
    st.one_of(st.integers(), st.text(max_size=5), _long),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
)


@given(_with_long)
def test_bounded_caps_every_long_string_wherever_it_sits(value):
    out = bounded(value)
    assert out == _capped_whole(value) and type(out) is type(value)
