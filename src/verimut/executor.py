"""Executors: how cells get scored. One seam; the pipeline does not care which is used.

The ledger stays with the caller (single writer): an executor only yields results.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from verimut.ledger import CellResult
from verimut.manifest import Cell
from verimut.scorer import Scorer


class Executor(Protocol):
    def run(self, scorer: Scorer, cells: Iterable[Cell]) -> Iterator[CellResult]: ...


class InProcess:
    """Score cells one after another in this process."""

    def run(self, scorer: Scorer, cells: Iterable[Cell]) -> Iterator[CellResult]:
        for cell in cells:
            yield scorer.score(cell)


EXECUTORS: dict[str, type] = {"inprocess": InProcess}
