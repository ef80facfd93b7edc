"""Out-of-scope writes on the task's own page (issue 41, item 4): kept only apart from the task's own effect."""

from __future__ import annotations

from verimut.grammar import oos
from verimut.oracle import state as o

START = {"fields": {"ch1": {"checked": False}, "ch2": {"checked": False}}, "episode": {"ended_by": None}}
REFERENCE = {"fields": {"ch1": {"checked": True}, "ch2": {"checked": False}}, "episode": {"ended_by": "submit"}}


def test_a_box_the_task_never_mentions_checked_beside_its_own_is_apart():
    effect = o.compare(START, REFERENCE, [])
    edited = {**REFERENCE, "fields": {"ch1": {"checked": True}, "ch2": {"checked": True}}}
    change = o.compare(REFERENCE, edited, [])
    assert oos.outside(change, effect) == ["fields"] and oos.apart(change, effect)


def test_a_write_that_ends_the_episode_before_the_tasks_own_is_not_apart():
    """click-widget: another radio button clicked first ends the episode, and the task's own click never runs."""
    effect = o.compare(START, REFERENCE, [])
    cut_short = {"fields": {"ch1": {"checked": False}, "ch2": {"checked": True}}, "episode": {"ended_by": "ch2"}}
    change = o.compare(REFERENCE, cut_short, [])
    assert oos.outside(change, effect) and not oos.apart(change, effect)
