"""examples/todo_bench.py with its verifiers changed between two versions: one loophole closed, one opened.

Each task asks for one item to be added. A loose verifier checks only that the item is on the list (the
example's: a duplicated write passes it); a strict one checks the whole list is the start plus that item. In
version 1, add_milk's verifier is loose and add_call's strict; version 2 swaps them: `verimut diff` of the two
audits closes add_milk's false accepts and opens add_call's.
"""

from examples.todo_bench import TASKS, TodoBench

from verimut import Verdict

START = ["water plants"]


class DiffBench(TodoBench):
    name = "todo-diff"

    def __init__(self, version: str, loose: set[str]) -> None:
        self.version, self.loose = version, loose

    def verify(self, episode, run):
        task = episode["task"]
        wanted = TASKS[task].split("'")[1]
        if task in self.loose:
            return Verdict(wanted in episode["items"], "item present")
        return Verdict(episode["items"] == [*START, wanted], "the list is the start plus the item")


before = DiffBench("1", {"todo/add_milk"})
after = DiffBench("2", {"todo/add_call"})
