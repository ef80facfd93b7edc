"""Repair's count checks, pure: items a list field gains, as a multiset."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from verimut import repair


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
    [diff] = repair.oracle.compare(start, end, [])
    assert repair.items_added(diff, "queue") == 1
    assert repair.grown_lists(diff) == {"queue": 1}


def test_changes_within_rejects_another_record_or_field_of_the_tasks_own_collection():
    from verimut.oracle import Change, CollectionDiff
    from verimut.repair import ChangesWithin

    check = ChangesWithin("bank.scheduled", ["3"], ["amount"])
    same = {"bank.scheduled": CollectionDiff("bank.scheduled", changed=[Change("3", {"amount": (1, 2)})])}
    other_key = {"bank.scheduled": CollectionDiff("bank.scheduled", changed=[Change("7", {"amount": (1, 2)})])}
    other_field = {"bank.scheduled": CollectionDiff("bank.scheduled", changed=[Change("3", {"recipient": ("a", "b")})])}
    assert check.fails(same) is None and check.fails({}) is None
    assert check.fails(other_key) == "bank.scheduled: also changed records ['7'], which the task does not change"
    assert (
        check.fails(other_field) == "bank.scheduled: also changed fields ['recipient'], which the task does not change"
    )
