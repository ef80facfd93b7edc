"""The repair: the minimal checks that reject an audit's confirmed false accepts, and no correct run.

`run` is the whole of `verimut repair`; its parts are `checks` (the check language, as typed data), `synthesis`,
`regrade` (through the Scorer and an executor) and `report` (repair/summary.md/json, the generated module).
"""

from __future__ import annotations

from verimut.repair.checks import (
    AddedExactly,
    AnswerStates,
    Carries,
    ChangesWithin,
    Check,
    ItemsAddedExactly,
    RemovedExactly,
    Unchanged,
    failures,
    verify,
)
from verimut.repair.regrade import Regrade, RepairedScoring, regrade, regrade_swap
from verimut.repair.repair import run, swap_census
from verimut.repair.report import MODULE, Report, load_module, markdown, read, report, still_open, table
from verimut.repair.synthesis import TaskRepair, ends_of, synthesize

__all__ = [
    "MODULE",
    "AddedExactly",
    "AnswerStates",
    "Carries",
    "ChangesWithin",
    "Check",
    "ItemsAddedExactly",
    "Regrade",
    "RemovedExactly",
    "RepairedScoring",
    "Report",
    "TaskRepair",
    "Unchanged",
    "ends_of",
    "failures",
    "load_module",
    "markdown",
    "read",
    "regrade",
    "regrade_swap",
    "report",
    "run",
    "still_open",
    "swap_census",
    "synthesize",
    "table",
    "verify",
]
