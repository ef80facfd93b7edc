"""Executors: how cells get scored. One seam; the pipeline does not care which is used.

The ledger stays with the caller (single writer): an executor only yields results, in
whatever order cells finish.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections.abc import Iterable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

from verimut.errors import AuditError
from verimut.ledger import CellResult
from verimut.manifest import Cell
from verimut.scorer import Scorer

DEFAULT_TIMEOUT = 300.0


class Executor(Protocol):
    def run(self, scorer: Scorer, cells: Iterable[Cell]) -> Iterator[CellResult]: ...


class InProcess:
    """Score cells one after another in this process (no timeout: a hanging cell hangs the run)."""

    def run(self, scorer: Scorer, cells: Iterable[Cell]) -> Iterator[CellResult]:
        for cell in cells:
            yield scorer.score(cell)


def _serve(scorer: Scorer, conn: Connection) -> None:
    while True:
        cell = conn.recv()
        if cell is None:
            return
        conn.send(scorer.score(cell))


class _Worker:
    def __init__(self, ctx: Any, scorer: Scorer) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(scorer, child), daemon=True)
        self.process.start()
        child.close()
        self.cell: Cell | None = None
        self.started = 0.0

    def give(self, cell: Cell) -> None:
        self.cell, self.started = cell, time.monotonic()
        self.conn.send(cell)

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            try:
                self.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


class Pool:
    """Score cells in worker processes, one cell per worker at a time.

    A cell that runs past `timeout` seconds is cut (its worker killed and replaced) and
    recorded as `error`; a worker that dies is replaced and its cell recorded as `error`.
    Workers are forked, so they share the adapter already loaded in this process.
    """

    def __init__(self, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.workers = (os.cpu_count() or 1) if workers is None else workers
        if self.workers < 1:
            raise AuditError(f"--workers must be at least 1, not {self.workers}")
        if timeout <= 0:
            raise AuditError(f"--timeout must be positive, not {timeout}")
        self.timeout = timeout

    def run(self, scorer: Scorer, cells: Iterable[Cell]) -> Iterator[CellResult]:
        pending = list(cells)
        pending.reverse()  # pop() from the end keeps manifest order
        if not pending:
            return
        ctx = mp.get_context("fork")
        pool = [_Worker(ctx, scorer) for _ in range(min(self.workers, len(pending)))]
        try:
            yield from self._drive(ctx, scorer, pool, pending)
        finally:
            for w in pool:
                w.stop(kill=w.cell is not None)

    def _drive(self, ctx: Any, scorer: Scorer, pool: list[_Worker], pending: list[Cell]) -> Iterator[CellResult]:
        while True:
            for w in pool:
                if w.cell is None and pending:
                    w.give(pending.pop())
            busy = [w for w in pool if w.cell is not None]
            if not busy:
                return
            now = time.monotonic()
            wake = max(0.0, min(w.started + self.timeout for w in busy) - now)
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=wake)
            for i, w in enumerate(pool):
                if w.cell is None:
                    continue
                cell = w.cell
                if w.conn in ready:
                    try:
                        result: CellResult = w.conn.recv()
                    except (EOFError, OSError):
                        result = None  # type: ignore[assignment]
                    if result is not None:
                        w.cell = None
                        yield result
                        continue
                if w.process.sentinel in ready or not w.process.is_alive():
                    code = w.process.exitcode
                    w.stop(kill=True)
                    pool[i] = _Worker(ctx, scorer)
                    yield scorer.failed(cell, f"the worker scoring this cell died (exit code {code})")
                elif time.monotonic() - w.started >= self.timeout:
                    w.stop(kill=True)
                    pool[i] = _Worker(ctx, scorer)
                    yield scorer.failed(cell, f"timed out after {self.timeout:g} s")


EXECUTORS = ("pool", "inprocess")


def make(name: str, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT) -> Executor:
    if name == "inprocess":
        return InProcess()
    if name == "pool":
        return Pool(workers, timeout)
    raise AuditError(f"unknown executor {name!r} (known: {', '.join(EXECUTORS)})")
