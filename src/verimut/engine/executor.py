"""Executors: how cells get scored. One seam; the pipeline does not care which is used.

This module is the seam, owned by the engine: the `Executor` protocol, what an executor may be given
(`Settings`), the registry of executors (`EXECUTORS`: the built-in ones live in `verimut.executors`, imported
when named; an installed package adds one through the entry-point group `verimut.executors`), and `make`.

An executor is given a scorer factory (`ScorerFactory`; the engine's is `scoring.Scoring`), never a benchmark's
name: it calls the factory in the process that scores (this one, a forked worker, a Ray actor), and asks of the
scorer only what `Scores` says. Cells arrive in groups that share a replay (a task's fault cells share its
reference run's prefixes; a swap column shares one run). An executor gives a whole group to one worker, so the
worker's scorer reuses what it replayed, in batches (`Batches`: one cell at first, then as many as take about
`BATCH_SECONDS` at the measured cost per cell; small groups share a batch), and yields each result as the worker
finishes it: the ledger stays with the caller (single writer) and a killed run loses only the cells not yet
returned. A batch saves a round trip per cell, which is most of a cheap cell's cost on Ray.

A cell that runs past the timeout is cut (its worker killed and replaced) and recorded as `error`; a worker that
dies is replaced and its cell recorded as `error`; the rest of its batch and group goes on in the new worker. The
timeout runs per cell: from the moment the worker returned the previous cell of its batch. Worker processes have
VERIMUT_WORKER set in their environment (to the executor's name). `startup_seconds` is what starting workers cost,
reported apart from scoring.

An executor also maps a function over independent items (`map`): the per-task work of building the manifest and
the report's figures. The pool and Ray both map in forked processes on this machine (`parallel.forked_map`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple, Protocol, TypeVar

from verimut.core.errors import AuditError
from verimut.core.records import Cell, CellResult
from verimut.core.registry import Registry
from verimut.engine.parallel import forked_map

__all__ = [
    "BATCH_SECONDS",
    "DEFAULT_TIMEOUT",
    "EXECUTORS",
    "MAX_BATCH",
    "STOP_SECONDS",
    "WORKER_ENV",
    "Batches",
    "Executor",
    "Group",
    "ScorerFactory",
    "Scores",
    "Settings",
    "check",
    "forked_map",
    "make",
]

DEFAULT_TIMEOUT = 300.0
STOP_SECONDS = 120.0  # how long a worker told to stop may take to release its kept episodes before it is killed
WORKER_ENV = "VERIMUT_WORKER"

Group = Sequence[Cell]
T = TypeVar("T")
R = TypeVar("R")


class Scores(Protocol):
    """What an executor needs of a scorer (the engine's is `scorer.Scorer`)."""

    def score(self, cell: Cell) -> CellResult: ...

    def failed(self, cell: Cell, reason: str) -> CellResult:
        """The row of a cell the executor could not finish (timed out, its worker died)."""
        ...

    def close(self) -> None:
        """Release the episodes kept for later cells: the worker scoring with this scorer is done."""
        ...


class ScorerFactory(Protocol):
    """Builds the scorer in the process that calls it. Executors whose workers do not share this process's memory
    (Ray) pickle it: only a `portable` factory can be sent."""

    @property
    def concurrency(self) -> int | None:
        """The scorer's limit: at most this many cells at once (a benchmark on shared live state); None: none."""
        ...

    @property
    def portable(self) -> bool: ...

    def __call__(self) -> Scores: ...


class Executor(Protocol):
    name: str
    startup_seconds: float  # starting workers, summed over this executor's runs (not scoring)

    def run(self, factory: ScorerFactory, groups: Iterable[Group]) -> Iterator[CellResult]: ...

    def map(self, fn: Callable[[T], R], items: Sequence[T], limit: int | None = None) -> Iterator[R]:
        """fn over items, results in items' order, at most `limit` at once (None: no limit of the caller's).
        fn's results cross a process boundary (pickled); fn itself need not (it is inherited)."""
        ...

    def close(self) -> None:
        """Release what the executor holds between runs (a Ray connection)."""
        ...


def check(workers: int | None, timeout: float) -> int:
    """The number of workers (None: every core), with the timeout checked."""
    n = (os.cpu_count() or 1) if workers is None else workers
    if n < 1:
        raise AuditError(f"--workers must be at least 1, not {n}")
    if not math.isfinite(timeout) or timeout <= 0:
        # nan compares false with everything, so it would never cut a cell; inf overflows the waits.
        raise AuditError(f"--timeout must be positive and finite (seconds), not {timeout}")
    return n


# A batch holds about this many seconds of work at the measured cost per cell: long enough that
# one round trip per batch is noise, short enough that a killed run loses little.
BATCH_SECONDS = 0.25
MAX_BATCH = 256


class Batches:
    """How many cells to send at once: one until a cost is measured, then about BATCH_SECONDS' worth."""

    def __init__(self, seconds: float = BATCH_SECONDS, most: int = MAX_BATCH) -> None:
        self.seconds, self.most = seconds, most
        self._cells, self._spent = 0, 0.0

    def add(self, result: CellResult) -> None:
        self._cells += 1
        self._spent += result.seconds

    def size(self) -> int:
        if not self._cells:
            return 1
        per_cell = self._spent / self._cells
        if per_cell * self.most <= self.seconds:  # also a cost too small to divide by
            return self.most
        return max(1, int(self.seconds / per_cell))


class Settings(NamedTuple):
    """What an executor may be given; each takes what it needs."""

    workers: int | None = None
    timeout: float = DEFAULT_TIMEOUT
    address: str | None = None  # Ray: a running cluster's


# name -> a callable that makes the executor from `Settings`; the built-in ones by "module:attr", imported when named.
EXECUTORS: Registry[Callable[[Settings], Executor]] = Registry("executor", entry_points="verimut.executors")
EXECUTORS.register("pool", "verimut.executors.pool:make")
EXECUTORS.register("inprocess", "verimut.executors.inprocess:make")
EXECUTORS.register("ray", "verimut.executors.ray:make")


def make(
    name: str, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT, *, address: str | None = None
) -> Executor:
    if address is not None and name != "ray":
        raise AuditError("--address is for --executor ray")
    return EXECUTORS.get(name)(Settings(workers, timeout, address))
