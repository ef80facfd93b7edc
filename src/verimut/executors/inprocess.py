"""Score cells one after another in this process (no timeout: a hanging cell hangs the run)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from verimut.core.records import CellResult
from verimut.engine.executor import Group, ScorerFactory, Scores, Settings

T = TypeVar("T")
R = TypeVar("R")


class InProcess:
    """Score cells one after another in this process (no timeout: a hanging cell hangs the run)."""

    name = "inprocess"
    startup_seconds = 0.0

    def close(self) -> None:
        pass

    def map(self, fn: Callable[[T], R], items: Sequence[T], limit: int | None = None) -> Iterator[R]:
        return (fn(x) for x in items)

    def run(self, factory: ScorerFactory | Scores, groups: Iterable[Group]) -> Iterator[CellResult]:
        scorer = _built(factory)
        try:
            for group in groups:
                for cell in group:
                    yield scorer.score(cell)
        finally:
            scorer.close()


def _built(factory: Any) -> Scores:
    """The factory's scorer; a scorer already built (as before executors took factories) is used as it is."""
    return factory if hasattr(factory, "score") else factory()


def make(settings: Settings) -> InProcess:
    return InProcess()
