"""Swap cells graded in place (`grades_in_place`): one replay per column, the same verdicts, and a verifier
that changes what it grades is caught.

The plug-in below cannot fork and holds one live episode at a time, as WorkArena's browser session does:
a reset ends the episode before it (its `closed` flag), and using an ended episode raises.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

from verimut import api as audit
from verimut.core.benchmark import Verdict, resolve
from verimut.core.run import Action, Run, Step
from verimut.engine.store import Store
from verimut.executors.inprocess import InProcess

ITEMS = {"shop/milk": "milk", "shop/eggs": "eggs", "shop/tea": "tea"}


class OneLive:
    name, version, telemetry = "onelive", "1", ()
    grades_in_place = True

    def __init__(self, meddle: str | None = None) -> None:
        self.meddle = meddle  # a task whose verifier, used as another's, adds to the episode it grades
        self.resets: Counter[str] = Counter()
        self.closed: list[str] = []
        self.live: dict | None = None

    def provenance(self):
        return {"onelive": "1"}

    def tasks(self):
        return list(ITEMS)

    def instruction(self, task):
        return f"Add {ITEMS[task]} to the basket."

    def reset(self, task):
        if self.live is not None:
            self.live["closed"] = True
        self.resets[task] += 1
        self.live = {"task": task, "basket": [], "closed": False}
        return self.live

    def _live(self, episode):
        assert not episode["closed"], "an ended episode was used"
        return episode

    def reference(self, task, episode):
        return Run((Action("add", {"item": ITEMS[task]}),), answer="Done.")

    def execute(self, episode, action):
        self._live(episode)["basket"].append(action.args["item"])
        return Step("ok")

    def is_write(self, action):
        return True

    def snapshot(self, episode):
        return {"basket": {str(i): {"item": x} for i, x in enumerate(self._live(episode)["basket"])}}

    def verify(self, episode, run):
        return Verdict(ITEMS[episode["task"]] in self._live(episode)["basket"], "item in basket")

    def verify_as(self, task, episode, run):
        basket = self._live(episode)["basket"]
        if task == self.meddle:
            basket.append("receipt")
        return Verdict(ITEMS[task] in basket, f"{ITEMS[task]} in basket")

    def close(self, episode):
        assert not episode["closed"], "a kept episode was ended by a reset before verimut released it"
        self.closed.append(episode["task"])
        episode["closed"] = True


def _swap(bench, out: Path, in_place: bool = True):
    adapter = dataclasses.replace(resolve(bench), grades_in_place=in_place)
    audit.swap(adapter, out, executor=InProcess())
    return Store(out).rows()


def _said(rows):
    return {k: (r.outcome, r.verdict, r.evidence.verifier, r.evidence.effect_missing) for k, r in rows.items()}


def test_in_place_gives_the_verdicts_of_a_replay_per_cell_with_one_replay_per_column(tmp_path):
    shared, alone = OneLive(), OneLive()
    rows = _swap(shared, tmp_path / "shared")
    assert _said(rows) == _said(_swap(alone, tmp_path / "alone", in_place=False))
    assert len(rows) == 9 and all(r.outcome != "error" for r in rows.values())
    # A column of two swap cells: one replay in place, two without (the manifest's and controls' resets alike).
    for task in ITEMS:
        assert shared.resets[task] == alone.resets[task] - 1
    # Kept episodes are released (before the next reset, or when the run ends), never left live.
    assert set(shared.closed) == set(ITEMS) and shared.live["closed"]
    # Replayed for one cell each, every swap cell's episode is released after its verdict: 2 per column.
    assert sorted(alone.closed) == sorted([*ITEMS, *ITEMS]) and alone.live["closed"]


def test_a_verifier_that_changes_the_episode_it_grades_in_place_is_an_error_and_not_shared(tmp_path):
    rows = _swap(OneLive(meddle="shop/tea"), tmp_path / "meddle")
    errs = {k: r for k, r in rows.items() if r.outcome == "error"}
    assert sorted(errs) == sorted(k for k, r in rows.items() if r.task == "shop/tea" and r.family == "swap")
    for r in errs.values():
        assert "changed the episode it graded in place" in r.reason and "basket" in r.reason
    # The other verifiers of those columns got an unchanged episode: milk's and eggs' are rejected
    # where their item is absent, as in a replay of their own.
    others = [r for r in rows.values() if r.family == "swap" and r.task != "shop/tea"]
    assert others and all(r.outcome == "rejected" for r in others)
