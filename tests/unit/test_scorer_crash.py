"""After a benchmark crash, the next cells are scored as if nothing had happened, on a benchmark that
keeps one live world per process (as AppWorld does): a reset closes every earlier episode."""

from __future__ import annotations

from examples.todo_bench import TodoBench

from verimut.core.benchmark import Verdict, resolve
from verimut.core.errors import BenchmarkCrash
from verimut.core.records import Outcome
from verimut.core.run import Action, Run, Step
from verimut.engine import pipeline
from verimut.engine.manifest import build
from verimut.engine.scorer import Scorer


class OneWorld(TodoBench):
    name = "oneworld"

    def __init__(self) -> None:
        self.world = 0
        self.crash_next = False

    def tasks(self):
        return ["w/a", "w/b"]

    def instruction(self, task):
        return "Add 'x' and 'y' to my list."

    def reset(self, task):
        self.world += 1
        return {"task": task, "items": [], "world": self.world}

    def _live(self, episode):
        if episode["world"] != self.world:
            raise RuntimeError("this episode's world was closed by a later reset")

    def reference(self, task, episode):
        read = Action("list_items") if task == "w/a" else Action("count_items")
        return Run((read, Action("add_item", {"text": "x"}), Action("add_item", {"text": "y"})), "Done.")

    def execute(self, episode, action):
        self._live(episode)
        if self.crash_next:
            self.crash_next = False
            raise BenchmarkCrash("the benchmark worker died (exit code 3) during execute")
        if action.name == "add_item":
            episode["items"].append(action.args["text"])
            return Step("ok")
        return Step(str(len(episode["items"])))

    def verify(self, episode, run):
        self._live(episode)
        return Verdict({"x", "y"} <= set(episode["items"]), "x and y present")


def test_alternative_runs_after_a_crash_are_scored_not_errors():
    bench = OneWorld()
    m = build(resolve(bench), ["w/a", "w/b"], pipeline.select_families(), lambda _: None)
    scorer = Scorer(resolve(bench), m)
    cells = [c for c in m.cells if c.task == "w/a"]
    control, faults = cells[0], [c for c in cells[1:] if c.run is not None]
    assert scorer.score(control).outcome == Outcome.CONTROL_PASS
    bench.crash_next = True
    crashed = scorer.score(faults[0])
    assert crashed.outcome == Outcome.ERROR and "died" in (crashed.reason or "")
    alternatives = [c for c in faults if c.family.startswith("alt-") and c.run is not None]
    assert alternatives, [c.cell_id for c in faults]
    for cell in alternatives:
        row = scorer.score(cell)
        assert row.outcome != Outcome.ERROR, (cell.cell_id, row.reason)
