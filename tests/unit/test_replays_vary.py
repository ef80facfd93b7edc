"""A benchmark whose replays vary (`replays_vary`: a browser's click can slip) is never compared with a reference
replay that slipped: the reference is replayed until its verifier passes, and a task none of whose replays pass
has its cells refused as unscorable, never judged against a wrong end."""

from __future__ import annotations

import dataclasses

from examples.todo_bench import TodoBench

from verimut.core.benchmark import resolve
from verimut.core.records import Outcome
from verimut.core.replay import REPLAY_TRIES
from verimut.core.run import Step
from verimut.engine import pipeline
from verimut.engine.manifest import build
from verimut.engine.scorer import Scorer


class Slippery(TodoBench):
    """add_item does nothing while `slips` > 0 (each slip used once), as a click that lands off its element."""

    name = "slippery"

    def __init__(self) -> None:
        self.slips = 0

    def execute(self, episode, action):
        if action.name == "add_item" and self.slips > 0:
            self.slips -= 1
            return Step("ok")
        return super().execute(episode, action)


def _claim_only(varies: bool, slips: int, family: str = "claim-only") -> tuple[Outcome, str | None]:
    bench = Slippery()
    adapter = dataclasses.replace(resolve(bench), replays_vary=varies)
    m = build(adapter, ["todo/add_milk"], pipeline.select_families(["claim-only"]), lambda _: None)
    cell = next(c for c in m.cells if c.family == family)
    bench.slips = slips  # the next reference replay (the scorer's, for this task's end) slips
    row = Scorer(adapter, m).score(cell)
    return row.outcome, row.reason


def test_a_slipped_reference_replay_would_make_a_false_reject():
    # The rule's reason to exist: compared with a replay that slipped, the run that does nothing looks correct.
    assert _claim_only(varies=False, slips=1)[0] == Outcome.FALSE_REJECT


def test_where_replays_vary_a_slipped_reference_is_replayed_until_it_passes():
    assert _claim_only(varies=True, slips=1)[0] == Outcome.REJECTED
    assert _claim_only(varies=True, slips=REPLAY_TRIES - 1)[0] == Outcome.REJECTED


def test_a_reference_that_never_passes_leaves_its_cells_unscorable():
    outcome, reason = _claim_only(varies=True, slips=REPLAY_TRIES)
    assert outcome == Outcome.REFUSED
    assert reason is not None and "no replay of the task's reference passed" in reason


def test_replays_that_do_not_vary_are_replayed_once():
    bench = Slippery()
    adapter = resolve(bench)
    m = build(adapter, ["todo/add_milk"], pipeline.select_families(["claim-only"]), lambda _: None)
    cell = next(c for c in m.cells if c.family == "claim-only")
    resets = []
    reset = bench.reset
    bench.reset = lambda task: resets.append(task) or reset(task)  # type: ignore[method-assign]
    Scorer(adapter, m).score(cell)
    assert len(resets) == 2  # the reference's replay and the cell's


def test_a_control_whose_replay_slipped_is_replayed_and_says_so():
    # The scorer replays the task's reference first (REPLAY_TRIES tries where replays vary), then the control.
    assert _claim_only(varies=False, slips=2, family="control")[0] == Outcome.CONTROL_FAIL
    outcome, reason = _claim_only(varies=True, slips=REPLAY_TRIES + 1, family="control")
    assert outcome == Outcome.CONTROL_PASS and reason is not None and "passed on replay 2" in reason
    outcome, reason = _claim_only(varies=True, slips=REPLAY_TRIES * 2, family="control")
    assert outcome == Outcome.CONTROL_FAIL and reason is not None and f"on each of {REPLAY_TRIES} replays" in reason
