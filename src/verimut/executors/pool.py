"""Score cells in forked worker processes: each builds its scorer (`factory()`) on the adapter it inherits."""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from verimut.core.errors import Machinery
from verimut.core.records import Cell, CellResult
from verimut.engine import executor as seam
from verimut.engine.executor import DEFAULT_TIMEOUT, STOP_SECONDS, WORKER_ENV, Group, ScorerFactory, Settings
from verimut.engine.parallel import forked_map, next_work, start
from verimut.executors.drive import Pending, Slot, drive

T = TypeVar("T")
R = TypeVar("R")


def _serve(factory: ScorerFactory, conn: Connection, parent: int) -> None:
    os.environ[WORKER_ENV] = "pool"
    scorer = factory()  # in the worker, on the adapter it inherited
    try:
        while (batch := next_work(conn, parent)) is not None:
            for cell in batch:
                conn.send(scorer.score(cell))
    finally:
        scorer.close()  # a forked worker runs no atexit hook: what it kept live is released here


class _Process(Slot):
    def __init__(self, ctx: Any, factory: ScorerFactory) -> None:
        super().__init__()
        self.conn, child = ctx.Pipe()
        # What the worker inherits (the adapter's suites, the manifest) is out of its collector's reach: a
        # collection there would write to every inherited object's header, copying the pages it shares with
        # this process (counted on the census: 68,000 minor page faults in the workers, 17,000 frozen).
        gc.freeze()
        self.process = start(ctx, _serve, factory, child, os.getpid())
        child.close()

    def send(self, batch: list[Cell]) -> None:
        self.conn.send(batch)

    def results(self) -> Iterator[CellResult]:
        """What the worker has returned so far (stops at its end of the pipe closing)."""
        try:
            while self.batch and self.conn.poll(0):
                result: CellResult = self.conn.recv()
                self.returned(result)
                yield result
        except (EOFError, OSError):
            return

    def lost(self) -> str | None:
        if wait([self.process.sentinel], 0) or not self.process.is_alive():
            # Its pipe can close a moment before it can be reaped: wait, so the code is known.
            self.process.join(timeout=5)
            code = self.process.exitcode
            reason = f"the worker scoring this cell died (exit code {code})"
            # Killed by a signal (the OOM killer, a user): the machinery's, scored again. An exit is the benchmark's.
            return Machinery(reason) if code is not None and code < 0 else reason
        return None

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            try:
                self.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        # An idle worker releases what it kept live first (a WorkArena session's teardown takes seconds).
        self.process.join(timeout=5 if kill else STOP_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def _ready(busy: list[_Process], seconds: float) -> set[_Process]:
    got = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=seconds))
    return {w for w in busy if w.conn in got or w.process.sentinel in got}


class Pool:
    """Score cells in forked worker processes (they share the adapter loaded in this process)."""

    name = "pool"

    def __init__(self, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.workers = seam.check(workers, timeout)
        self.timeout = timeout
        self.startup_seconds = 0.0
        self.batches = seam.Batches()

    def close(self) -> None:
        pass

    def map(self, fn: Callable[[T], R], items: Sequence[T], limit: int | None = None) -> Iterator[R]:
        return forked_map(fn, items, min(self.workers, limit or self.workers))

    def run(self, factory: ScorerFactory, groups: Iterable[Group]) -> Iterator[CellResult]:
        pending = Pending(groups)  # read as workers need them
        if not pending:
            return
        ctx = mp.get_context("fork")
        # A benchmark on shared live state (one WorkArena instance) says how many cells it takes at once.
        limit = factory.concurrency or self.workers
        began = time.monotonic()
        pool: list[_Process] = []
        try:
            for _ in range(min(self.workers, pending.count(self.workers), limit)):
                pool.append(_Process(ctx, factory))  # one by one: a Ctrl-C here stops those already started
            self.startup_seconds += time.monotonic() - began
            yield from drive(
                pool,
                pending,
                self.batches,  # the cost measured in an earlier run (the controls) sizes this one's batches
                self.timeout,
                _ready,
                lambda _old, _again: _Process(ctx, factory),
                lambda cell, reason: factory().failed(cell, reason),
            )
        finally:
            for w in pool:
                w.stop(kill=bool(w.batch))
            gc.unfreeze()  # this process's own garbage from before the workers started may be collected again


def make(settings: Settings) -> Pool:
    return Pool(settings.workers, settings.timeout)
