"""The one loop that drives a crew of workers (forked processes, Ray actors) through groups of cells.

A worker is a `Slot`: the rest of its group, and the batch it was sent (its first cell in flight since `started`).
Kinds of worker differ in how a batch is sent, how its results come back, and how a lost worker shows; the loop
(`drive`) is the same: feed each idle worker its next batch, wait for the first result or the first cell to run
out of time, pass on what came back, and cut a cell that timed out or whose worker died, on a new worker that
takes over the rest of its batch and group.
"""

from __future__ import annotations

import abc
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import TypeVar

from verimut.core.errors import AuditError
from verimut.core.records import Cell, CellResult
from verimut.engine.executor import Batches


class Lost(Exception):
    """A worker is gone while it returned its batch: `reason`. With `again`, which cell it died on is not known
    (its finished cells may have died with it, unsent): the batch goes again, on a new worker, one cell a call."""

    def __init__(self, reason: str, again: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.again = reason, again


class Slot(abc.ABC):
    """What one worker holds: the rest of its group, and the batch it was sent."""

    def __init__(self) -> None:
        self.queue: list[Cell] = []
        self.batch: list[Cell] = []
        self.started = 0.0

    @property
    def cell(self) -> Cell | None:
        return self.batch[0] if self.batch else None

    @abc.abstractmethod
    def send(self, batch: list[Cell]) -> None: ...

    @abc.abstractmethod
    def results(self) -> Iterator[CellResult]:
        """What the worker has returned so far, in batch order (each through `returned`); raises `Lost`."""

    def lost(self) -> str | None:
        """After a wait in which it returned nothing: why its worker is gone, or None (it is alive)."""
        return None

    @abc.abstractmethod
    def stop(self, kill: bool = False) -> None: ...

    def batch_size(self, batches: Batches) -> int:
        return batches.size()

    def give(self, batch: list[Cell]) -> None:
        self.batch, self.started = batch, time.monotonic()
        self.send(batch)

    def returned(self, result: CellResult) -> None:
        """The worker finished the cell in flight; the next of its batch starts now."""
        cell = self.batch.pop(0)
        if cell.cell_id != result.cell_id:  # a worker answers its batch in order; anything else is a bug
            raise AuditError(f"a worker returned {result.cell_id!r} while scoring {cell.cell_id!r}")
        self.started = time.monotonic()

    def leftover(self) -> list[Cell]:
        """After the cell in flight is cut: what the worker that takes over must still score."""
        return self.batch[1:] + self.queue


S = TypeVar("S", bound=Slot)


class Pending:
    """The groups still to give out, in order, read from `groups` only as workers need them: the manifest's
    cells are not all held at once (a swap census of a million cells would hold every one for its whole run)."""

    def __init__(self, groups: Iterable[Sequence[Cell]]) -> None:
        self._groups = (list(g) for g in groups if g)
        self._ahead: deque[list[Cell]] = deque()  # read, not given out yet

    def count(self, most: int) -> int:
        """How many groups are left, counted up to `most` (reading that many ahead)."""
        while len(self._ahead) < most and (group := next(self._groups, None)) is not None:
            self._ahead.append(group)
        return len(self._ahead)

    def __bool__(self) -> bool:
        return self.count(1) > 0

    def pop(self) -> list[Cell]:
        """The next group (IndexError when none is left, as a list's pop)."""
        if not self.count(1):
            raise IndexError("no group left")
        return self._ahead.popleft()


def feed(slots: Sequence[S], pending: Pending, batches: Batches) -> list[S]:
    """Give each idle worker its next batch: the rest of its group, then whole new groups, up to the batch
    size (small groups, such as the controls' one cell each, share a batch). Return the busy workers."""
    for w in slots:
        if w.batch:
            continue
        n, batch = w.batch_size(batches), list[Cell]()
        while len(batch) < n and (w.queue or pending):
            if not w.queue:
                w.queue = pending.pop()
            take = n - len(batch)
            batch += w.queue[:take]
            w.queue = w.queue[take:]
        if batch:
            w.give(batch)
    return [w for w in slots if w.batch]


def wake(busy: Sequence[Slot], timeout: float) -> float:
    """Seconds until the first cell in flight runs out of time."""
    return max(0.0, min(w.started + timeout for w in busy) - time.monotonic())


def drive(
    slots: list[S],
    pending: Pending,
    batches: Batches,
    timeout: float,
    wait: Callable[[list[S], float], Collection[S]],
    replace: Callable[[S, bool], S],
    failed: Callable[[Cell, str], CellResult],
) -> Iterator[CellResult]:
    """Score `pending` (groups, in order) on `slots`, yielding each result as it comes back.

    `wait(busy, seconds)`: the busy slots with something to read (results, or a death); `replace(slot, again)`: a
    new worker for a cut or lost one (`again`: the lost one's batch goes again, one cell a call); `failed`: the
    row of a cut cell. `slots` is updated in place (the caller keeps the live workers). `batches`: the cost
    measured in an earlier run (the controls) sizes this one's batches.
    """
    while True:
        busy = feed(slots, pending, batches)
        if not busy:
            return
        ready = wait(busy, wake(busy, timeout))
        for n, s in enumerate(slots):
            if not s.batch:
                continue
            reason = None
            if s in ready:
                got = False
                try:
                    for result in s.results():
                        got = True
                        batches.add(result)
                        yield result
                except Lost as e:
                    if e.again:
                        slots[n] = replace(s, True)
                        slots[n].queue = s.batch + s.queue
                        continue
                    reason = e.reason
                if got and reason is None:
                    continue  # a death or a timeout shows on the next wait
            if not s.batch:
                continue
            cell = s.batch[0]
            if reason is None:
                reason = s.lost()
            if reason is None and time.monotonic() - s.started >= timeout:
                reason = f"timed out after {timeout:g} s"
            if reason is not None:
                s.stop(kill=True)
                slots[n] = replace(s, False)
                slots[n].queue = s.leftover()  # the rest of the batch and group go on in the new worker
                yield failed(cell, reason)
