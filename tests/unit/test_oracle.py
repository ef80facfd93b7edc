"""The end-state check: reading snapshots as collections, diffs, masks and telemetry."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from verimut.core.run import Action
from verimut.oracle import state as oracle

scalars = st.one_of(st.integers(-5, 5), st.text(max_size=4), st.booleans(), st.none())
records = st.fixed_dictionaries({"id": st.integers(0, 50), "name": st.text(max_size=4), "n": st.integers(0, 3)})
states = st.fixed_dictionaries(
    {
        "bank": st.fixed_dictionaries({"balance": st.integers(0, 9), "rows": st.lists(records, max_size=5)}),
        "log": st.lists(scalars, max_size=5),
        "files": st.dictionaries(
            st.text("0123456789", min_size=1, max_size=2),
            st.fixed_dictionaries({"body": st.text(max_size=3)}),
            max_size=4,
        ),
    }
)


@given(states)
def test_a_state_equals_itself(s: dict[str, Any]) -> None:
    assert oracle.compare(s, s, []) == []
    assert oracle.find_masks(oracle.collections(s), oracle.collections(s)) == set()


@given(states, states)
def test_an_empty_diff_means_equal_keyed_records_and_equal_multisets(a: dict[str, Any], b: dict[str, Any]) -> None:
    ca, cb = oracle.collections(a), oracle.collections(b)
    if oracle.diff(ca, cb):
        return
    for path in set(ca) | set(cb):
        x = ca.get(path, oracle.Collection(True, {}))
        y = cb.get(path, oracle.Collection(True, {}))
        if x.keyed and y.keyed:
            assert x.records == y.records
        else:
            assert sorted(map(oracle.canonical, x.records.values())) == sorted(
                map(oracle.canonical, y.records.values())
            )


@given(states, states)
def test_diff_backwards_swaps_added_and_removed(a: dict[str, Any], b: dict[str, Any]) -> None:
    forth = {d.collection: (len(d.added), len(d.removed), len(d.changed)) for d in oracle.compare(a, b, [])}
    back = {d.collection: (len(d.removed), len(d.added), len(d.changed)) for d in oracle.compare(b, a, [])}
    assert forth == back


@given(states, records)
def test_appending_a_record_is_one_added_in_that_collection(s: dict[str, Any], rec: dict[str, Any]) -> None:
    after = {**s, "log": [*s["log"], "x"]}
    [d] = oracle.compare(s, after, [])
    assert d.collection == "log" and len(d.added) == 1 and not d.removed and not d.changed


@given(states)
def test_masks_found_between_two_replays_make_them_equal(s: dict[str, Any]) -> None:
    # Two replays that differ only in a clock stamp on every file.
    a = {**s, "files": {k: {**v, "stamp": "10:00:01"} for k, v in s["files"].items()}}
    b = {**s, "files": {k: {**v, "stamp": "10:00:02"} for k, v in s["files"].items()}}
    masks = oracle.find_masks(oracle.collections(a), oracle.collections(b))
    assert masks == ({"files[*].stamp"} if s["files"] else set())
    assert oracle.compare(a, b, masks) == []


def test_records_are_keyed_by_id_and_a_duplicate_is_seen() -> None:
    start = {"bank": {"balance": 10, "rows": [{"id": 1, "to": "A", "amount": 5}]}}
    dup = {"bank": {"balance": 0, "rows": [{"id": 1, "to": "A", "amount": 5}, {"id": 2, "to": "A", "amount": 5}]}}
    colls = oracle.collections(start)
    assert set(colls) == {"bank", "bank.rows"} and colls["bank.rows"].keyed
    diffs = {d.collection: d for d in oracle.compare(start, dup, [])}
    assert diffs["bank.rows"].counts() == "1 added"
    assert diffs["bank.rows"].added == [{"key": "2", "record": {"id": 2, "to": "A", "amount": 5}}]
    assert diffs["bank"].changed[0].fields == {"value": (10, 0)}


def test_telemetry_patterns_leave_out_collections_and_fields() -> None:
    a = {"web": {"requests": ["x"]}, "inbox": {"emails": {"1": {"id_": "1", "read": False, "body": "hi"}}}}
    b = {"web": {"requests": ["x", "y"]}, "inbox": {"emails": {"1": {"id_": "1", "read": True, "body": "hi"}}}}
    assert len(oracle.compare(a, b, [])) == 2
    assert oracle.compare(a, b, ["web.requests", "inbox.emails[*].read"]) == []


def test_generated_keys_are_masked_and_compared_as_a_multiset() -> None:
    a = {"files": {"1": {"body": "x"}}}
    b = {"files": {"2": {"body": "x"}}}
    masks = oracle.find_masks(oracle.collections(a), oracle.collections(b))
    assert masks == {"files[#]"}
    assert oracle.compare(a, b, masks) == []
    c = {"files": {"3": {"body": "x"}, "4": {"body": "x"}}}
    [d] = oracle.compare(a, c, masks)
    assert len(d.added) == 1


# --- is one effect part of another (the swap census's "effect present") ---------------------


@given(states, states)
def test_an_effect_contains_itself_and_the_empty_effect(a: dict[str, Any], b: dict[str, Any]) -> None:
    d = oracle.compare(a, b, [])
    assert oracle.missing(d, d).gaps == []
    assert oracle.missing(d, []).gaps == []


@given(states, states)
def test_a_nonempty_effect_is_missing_from_no_change(a: dict[str, Any], b: dict[str, Any]) -> None:
    d = oracle.compare(a, b, [])
    substantive = [x for x in d if x.added or x.removed or x.changed or x.reordered]
    assert bool(oracle.missing([], d).gaps) == bool(substantive)


@given(states, states, st.lists(records, max_size=3))
def test_an_effect_is_contained_in_itself_plus_more(a: dict[str, Any], b: dict[str, Any], extra: list) -> None:
    want = oracle.compare(a, b, [])
    have = [oracle.CollectionDiff(d.collection, [*d.added, *extra], d.removed, d.changed, d.reordered) for d in want]
    have.append(oracle.CollectionDiff("elsewhere", added=extra))
    assert oracle.missing(have, want).gaps == []


def test_a_record_added_with_another_generated_id_is_the_same_effect() -> None:
    start = {"bank": {"rows": [{"id": 1, "to": "A", "amount": 5}]}}
    want = oracle.compare(start, {"bank": {"rows": [*start["bank"]["rows"], {"id": 2, "to": "B", "amount": 9}]}}, [])
    other_id = {
        "bank": {"rows": [*start["bank"]["rows"], {"id": 3, "to": "C", "amount": 1}, {"id": 7, "to": "B", "amount": 9}]}
    }
    other_value = {"bank": {"rows": [*start["bank"]["rows"], {"id": 2, "to": "B", "amount": 10}]}}
    assert oracle.missing(oracle.compare(start, other_id, []), want).gaps == []
    [gap] = oracle.missing(oracle.compare(start, other_value, []), want).gaps
    assert gap.startswith("bank.rows: a record the task added is not added") and '"amount":9' in gap


def test_free_text_may_differ_but_pinned_fields_may_not() -> None:
    start = {"inbox": [{"to": "Alice", "body": "hi"}]}
    want = oracle.compare(start, {"inbox": [*start["inbox"], {"to": "Bob", "body": "<summary>"}]}, [])
    other_body = oracle.compare(start, {"inbox": [*start["inbox"], {"to": "Bob", "body": "a summary"}]}, [])
    other_to = oracle.compare(start, {"inbox": [*start["inbox"], {"to": "Eve", "body": "<summary>"}]}, [])
    loose = oracle.missing(other_body, want, free=["<summary>"])
    assert loose.gaps == [] and len(loose.loose) == 1
    assert oracle.missing(other_body, want).gaps  # without the free-text allowance it is another effect
    assert oracle.missing(other_to, want, free=["<summary>"]).gaps


def test_a_change_must_set_the_same_value() -> None:
    start = {"account": {"iban": "X", "balance": 5}}
    want = oracle.compare(start, {"account": {"iban": "Y", "balance": 5}}, [])
    assert oracle.missing(oracle.compare(start, {"account": {"iban": "Y", "balance": 6}}, []), want).gaps == []
    [gap] = oracle.missing(oracle.compare(start, {"account": {"iban": "Z", "balance": 5}}, []), want).gaps
    assert gap == 'account[iban].value: the task sets it to "Y"'


def test_only_left_out_allows_dropping_idle_writes_and_nothing_else():
    login, post, other = Action("login", {"pw": "x"}), Action("post", {"t": "hi"}), Action("login", {"pw": "y"})
    assert oracle.only_left_out([login, post], [post], [login])  # the idle login left out
    assert oracle.only_left_out([login, post], [login, post], [login])  # nothing left out
    assert not oracle.only_left_out([login, post], [post], [])  # the login is not idle
    assert not oracle.only_left_out([login, post], [login], [login])  # the post is left out
    assert not oracle.only_left_out([login, post], [other, post], [login])  # another login made: not left out
    assert not oracle.only_left_out([login, login, post], [post, post], [login])  # a second post made
