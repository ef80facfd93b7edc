"""Repair's count checks, pure: items a list field gains, as a multiset."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from verimut.oracle import state as oracle
from verimut.repair import checks as repair


@given(st.lists(st.integers(0, 4)), st.lists(st.integers(0, 4)), st.randoms())
def test_items_added_counts_what_a_list_field_gains_as_a_multiset(before, extra, rnd):
    after = before + extra
    rnd.shuffle(after)  # order is not what the check counts
    start = {"player": {"1": {"id": 1, "queue": before, "volume": 3}}}
    end = {"player": {"1": {"id": 1, "queue": after, "volume": 3}}}
    check = repair.ItemsAddedExactly("player", "queue", len(extra))
    assert repair.failures([check], start, end, []) == []
    wrong = repair.ItemsAddedExactly("player", "queue", len(extra) + 1)
    assert repair.failures([wrong], start, end, []) == [
        f"player[*].queue: {len(extra)} items added, expected {len(extra) + 1}"
    ]


def test_a_removed_item_does_not_offset_an_added_one():
    start = {"player": {"1": {"id": 1, "queue": [5, 5, 7]}}}
    end = {"player": {"1": {"id": 1, "queue": [5, 8]}}}
    [diff] = oracle.compare(start, end, [])
    assert repair.items_added(diff, "queue") == 1
    assert repair.grown_lists(diff) == {"queue": 1}


def test_changes_within_rejects_another_record_or_field_of_the_tasks_own_collection():
    from verimut.oracle.state import Change, CollectionDiff
    from verimut.repair.checks import ChangesWithin

    check = ChangesWithin("bank.scheduled", ["3"], ["amount"])
    same = {"bank.scheduled": CollectionDiff("bank.scheduled", changed=[Change("3", {"amount": (1, 2)})])}
    other_key = {"bank.scheduled": CollectionDiff("bank.scheduled", changed=[Change("7", {"amount": (1, 2)})])}
    other_field = {"bank.scheduled": CollectionDiff("bank.scheduled", changed=[Change("3", {"recipient": ("a", "b")})])}
    assert check.fails(same) is None and check.fails({}) is None
    assert check.fails(other_key) == "bank.scheduled: also changed records ['7'], which the task does not change"
    assert (
        check.fails(other_field) == "bank.scheduled: also changed fields ['recipient'], which the task does not change"
    )


def test_carries_finds_the_value_among_the_added_records_whatever_their_keys():
    from verimut.repair.checks import Carries

    start = {"payments": [{"id": "p1", "to": "Bob", "amount": 10}]}
    end = {"payments": [*start["payments"], {"id": "p9", "to": "Ann", "amount": 1200}]}
    assert repair.failures([Carries("payments", "amount", 1200)], start, end, []) == []
    assert repair.failures([Carries("payments", "to", "Ann")], start, end, []) == []
    assert repair.failures([Carries("payments", "amount", 45)], start, end, []) == [
        "payments (added).amount: wrote 1200, expected 45"
    ]
    # the record already there carries 10: only what the run adds counts
    assert repair.failures([Carries("payments", "amount", 10)], start, end, []) == [
        "payments (added).amount: wrote 1200, expected 10"
    ]
    assert repair.failures([Carries("payments", "amount", 1200)], start, start, []) == [
        "payments (added).amount: wrote nothing, expected 1200"
    ]


def test_carries_counts_equal_values_and_reads_a_changed_record_or_a_bare_value():
    from verimut.oracle.state import Change, CollectionDiff
    from verimut.repair.checks import Carries

    three = [{"key": str(k), "record": {"id": k, "amount": 10.0}} for k in range(3)]
    one_off = [*three[:2], {"key": "2", "record": {"id": 2, "amount": 11.0}}]
    check = Carries("tx", "amount", 10.0, times=3)
    assert check.fails({"tx": CollectionDiff("tx", added=three)}) is None
    assert (
        check.fails({"tx": CollectionDiff("tx", added=one_off)})
        == "tx (added).amount: wrote 10.0, 10.0, 11.0, expected 3 x 10.0"
    )
    # a record the run changes, by key; a scalar record is diffed as its field "value"
    pw = Carries("user", None, "s3cret", key="password")
    assert (
        pw.fails({"user": CollectionDiff("user", changed=[Change("password", {"value": ("old", "s3cret")})])}) is None
    )
    assert pw.fails({"user": CollectionDiff("user", changed=[Change("password", {"value": ("old", "x")})])}) == (
        'user[password]: wrote "x", expected "s3cret"'
    )
    assert pw.fails({"user": CollectionDiff("user", changed=[Change("email", {"value": ("a", "s3cret")})])}) is not None
    # a multiset collection's added records are bare values when they are not dicts
    tags = Carries("tags", None, "urgent")
    assert tags.fails({"tags": CollectionDiff("tags", added=["urgent"])}) is None
    assert (
        str(check) == "Carries('tx', 'amount', 10.0, times=3)"
        and str(pw) == "Carries('user', None, 's3cret', key='password')"
    )


def test_postconditions_leave_out_free_text_and_generated_ids():
    from verimut.core.records import TaskFacts
    from verimut.core.run import Run
    from verimut.oracle.state import Change, CollectionDiff

    effect = [
        CollectionDiff(
            "pay",
            added=[{"key": "8", "record": {"id": 8, "to": "Ann", "amount": 5.0, "note": "thanks a lot"}}],
            changed=[Change("3", {"amount": (1, 2)})],
        )
    ]
    facts = TaskFacts(Run(()), [], [], effect=effect, free_text=["thanks a lot"])
    assert [str(c) for c in repair.postconditions(facts)] == [
        "Carries('pay', 'to', 'Ann')",
        "Carries('pay', 'amount', 5.0)",
        "Carries('pay', 'amount', 2, key='3')",
    ]


def test_removed_exactly_counts_removals():
    start = {"files": [{"id_": "1", "name": "a"}, {"id_": "2", "name": "b"}, {"id_": "3", "name": "c"}]}
    one = {"files": start["files"][1:]}
    two = {"files": start["files"][2:]}
    check = repair.RemovedExactly("files", 1)
    assert repair.failures([check], start, one, []) == []
    assert repair.failures([check], start, two, []) == ["files: 2 removed, expected 1"]
