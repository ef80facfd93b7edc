"""verimut's own reference runs for MiniWoB++ (which ships none): one solver per task, grouped by kind of task.

A solver reads the task's instruction (the utterance, and the fields miniwob's own `miniwob.fields` extractor
takes from it) and, where it must, the page as it is at the start (through `Instruction.read`, verimut's own
script, never the task's reward code), and returns the run's actions in verimut's vocabulary (`miniwob_page`).
A module may add readers of its tasks' own structures (an inbox, a feed) to the end state: `STATES`, a
task -> JS function returning {collection: records}, merged into the snapshot beside `fields`.

Each group module holds `SOLVERS` and `STATES`; this registry joins them, and a task in two groups is an error.
"""

from __future__ import annotations

from . import basic, email, forms, web
from ._act import Action, Instruction, Solver

__all__ = ["SOLVERS", "STATES", "Action", "Instruction", "Solver"]

SOLVERS: dict[str, Solver] = {}
STATES: dict[str, str] = {}
for _group in (basic, forms, email, web):
    for _task, _solver in _group.SOLVERS.items():
        if _task in SOLVERS:
            raise RuntimeError(f"two solvers for {_task}: {_group.__name__} and another group")
        SOLVERS[_task] = _solver
    STATES.update(_group.STATES)
