"""Executors: how cells get scored. One seam; the pipeline does not care which is used.

Cells arrive in groups that share a replay (a task's fault cells share its reference run's
prefixes; a swap column shares one run). An executor gives a whole group to one worker,
one cell at a time, so the worker's scorer reuses what it replayed, and yields each result
as it is finished. The ledger stays with the caller (single writer).

A cell that runs past the timeout is cut (its worker killed and replaced) and recorded as
`error`; a worker that dies is replaced and its cell recorded as `error`; the rest of the
group goes on in the new worker. Worker processes have VERIMUT_WORKER set in their
environment (to the executor's name).
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, NamedTuple, Protocol

from verimut.errors import AuditError
from verimut.ledger import CellResult
from verimut.manifest import Cell
from verimut.registry import Registry
from verimut.scorer import Scorer

DEFAULT_TIMEOUT = 300.0
WORKER_ENV = "VERIMUT_WORKER"

Group = Sequence[Cell]


class Executor(Protocol):
    def run(self, scorer: Scorer, groups: Iterable[Group]) -> Iterator[CellResult]: ...

    def close(self) -> None:
        """Release what the executor holds between runs (a Ray connection)."""
        ...


class InProcess:
    """Score cells one after another in this process (no timeout: a hanging cell hangs the run)."""

    def close(self) -> None:
        pass

    def run(self, scorer: Scorer, groups: Iterable[Group]) -> Iterator[CellResult]:
        for group in groups:
            for cell in group:
                yield scorer.score(cell)


def _check(workers: int | None, timeout: float) -> int:
    n = (os.cpu_count() or 1) if workers is None else workers
    if n < 1:
        raise AuditError(f"--workers must be at least 1, not {n}")
    if timeout <= 0:
        raise AuditError(f"--timeout must be positive, not {timeout}")
    return n


class _Slot:
    """What one worker is doing: the rest of its group, and the cell in flight since `started`."""

    def __init__(self) -> None:
        self.queue: list[Cell] = []
        self.cell: Cell | None = None
        self.started = 0.0


def _feed(slots: Sequence[Any], pending: list[list[Cell]]) -> list[Any]:
    """Give each idle worker the next cell of its group (or a new group); return the busy ones."""
    for w in slots:
        if w.cell is None:
            if not w.queue and pending:
                w.queue = pending.pop()
            if w.queue:
                w.give(w.queue.pop(0))
    return [w for w in slots if w.cell is not None]


def _wake(busy: Sequence[_Slot], timeout: float) -> float:
    """Seconds until the first cell in flight runs out of time."""
    return max(0.0, min(w.started + timeout for w in busy) - time.monotonic())


# --- a local process pool ----------------------------------------------------------------


def _serve(scorer: Scorer, conn: Connection) -> None:
    os.environ[WORKER_ENV] = "pool"
    parent = os.getppid()
    while True:
        # A killed parent does not close this pipe (sibling workers hold copies of its end), so
        # notice the parent's death by being re-parented, rather than wait forever.
        if not conn.poll(1.0):
            if os.getppid() != parent:
                return
            continue
        try:
            cell = conn.recv()
        except EOFError:
            return
        if cell is None:
            return
        conn.send(scorer.score(cell))


class _Process(_Slot):
    def __init__(self, ctx: Any, scorer: Scorer) -> None:
        super().__init__()
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(scorer, child), daemon=True)
        self.process.start()
        child.close()

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
    """Score cells in forked worker processes (they share the adapter loaded in this process)."""

    name = "pool"

    def __init__(self, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.workers = _check(workers, timeout)
        self.timeout = timeout

    def close(self) -> None:
        pass

    def run(self, scorer: Scorer, groups: Iterable[Group]) -> Iterator[CellResult]:
        pending = [list(g) for g in groups if g]
        pending.reverse()  # pop() from the end keeps manifest order
        if not pending:
            return
        ctx = mp.get_context("fork")
        # A benchmark on shared live state (one WorkArena instance) says how many cells it takes at once.
        limit = scorer.bench.concurrency or self.workers
        pool = [_Process(ctx, scorer) for _ in range(min(self.workers, len(pending), limit))]
        try:
            yield from self._drive(ctx, scorer, pool, pending)
        finally:
            for w in pool:
                w.stop(kill=w.cell is not None)

    def _drive(self, ctx: Any, scorer: Scorer, pool: list[_Process], pending: list[list[Cell]]) -> Iterator[CellResult]:
        while True:
            busy = _feed(pool, pending)
            if not busy:
                return
            wake = _wake(busy, self.timeout)
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=wake)
            for n, w in enumerate(pool):
                if w.cell is None:
                    continue
                cell = w.cell
                if w.conn in ready:
                    try:
                        result: CellResult | None = w.conn.recv()
                    except (EOFError, OSError):
                        result = None
                    if result is not None:
                        w.cell = None
                        yield result
                        continue
                reason = None
                if w.process.sentinel in ready or not w.process.is_alive():
                    reason = f"the worker scoring this cell died (exit code {w.process.exitcode})"
                elif time.monotonic() - w.started >= self.timeout:
                    reason = f"timed out after {self.timeout:g} s"
                if reason is not None:
                    w.stop(kill=True)
                    pool[n] = _Process(ctx, scorer)
                    pool[n].queue = w.queue  # the rest of the group goes on in the new worker
                    yield scorer.failed(cell, reason)


# --- Ray ------------------------------------------------------------------------------------


class Ray:
    """Score cells in Ray actors: a local Ray instance started here, or a cluster at `address`.

    Each actor loads the adapter itself (from the benchmark name and options the command line was given)
    and decodes the manifest once, so nothing but cells and results crosses the wire.
    """

    name = "ray"

    def __init__(
        self,
        benchmark: str | None,
        version: str | None,
        workers: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        address: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise AuditError(
                "--executor ray needs Ray: install verimut with the 'ray' extra (pip install 'verimut[ray]')"
            ) from None
        if benchmark is None:
            raise AuditError("--executor ray needs the benchmark by name (a built-in name or module:object)")
        self.benchmark, self.version, self.options = benchmark, version, dict(options or {})
        self.workers = _check(workers, timeout)
        self.timeout = timeout
        self.address = address
        self._owned = False  # whether this executor connected (or started Ray), so must close it
        if address:  # fail now, before any work, when the cluster cannot be reached
            self._start()

    def close(self) -> None:
        import ray

        if self._owned and ray.is_initialized():
            ray.shutdown()
        self._owned = False

    def _start(self) -> None:
        """Connect to the cluster, or start a local instance, once; later calls reuse it."""
        import ray

        if ray.is_initialized():
            return
        if self.address:
            _reachable(self.address)
            try:
                ray.init(address=self.address, logging_level=logging.ERROR, log_to_driver=False)
            except Exception as e:  # noqa: BLE001  (Ray raises several kinds: connection, authentication, version)
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise AuditError(f"cannot connect to the Ray cluster at {self.address}: {first}") from None
        else:
            ray.init(
                address="local",  # a new instance, even when `ray start` runs one on this machine
                num_cpus=self.workers,
                include_dashboard=False,
                logging_level=logging.ERROR,
                log_to_driver=False,
                object_store_memory=128 * 1024 * 1024,
            )
        self._owned = True

    def run(self, scorer: Scorer, groups: Iterable[Group]) -> Iterator[CellResult]:
        import ray

        pending = [list(g) for g in groups if g]
        pending.reverse()
        if not pending:
            return
        self._start()
        actor_cls = ray.remote(num_cpus=1, max_restarts=0)(_RayScorer)
        manifest = ray.put(_encode(scorer.manifest))

        def spawn() -> Any:
            return actor_cls.remote(self.benchmark, self.version, self.options, manifest, os.getcwd())

        slots = [_RaySlot(spawn()) for _ in range(min(self.workers, len(pending)))]
        try:
            while True:
                busy = _feed(slots, pending)
                if not busy:
                    return
                wake = _wake(busy, self.timeout)
                done, _ = ray.wait([s.ref for s in busy], num_returns=1, timeout=wake)
                for n, s in enumerate(slots):
                    if s.cell is None:
                        continue
                    cell = s.cell
                    reason = None
                    if s.ref in done:
                        try:
                            result: CellResult = ray.get(s.ref)
                        except ray.exceptions.RayActorError as e:
                            reason = f"the worker scoring this cell died ({type(e).__name__})"
                        except ray.exceptions.RayError as e:
                            reason = f"scoring raised in the worker: {str(e).strip().splitlines()[-1]}"
                        else:
                            s.cell = None
                            yield result
                            continue
                    elif time.monotonic() - s.started >= self.timeout:
                        reason = f"timed out after {self.timeout:g} s"
                    if reason is not None:
                        ray.kill(s.actor, no_restart=True)
                        slots[n] = _RaySlot(spawn())
                        slots[n].queue = s.queue
                        yield scorer.failed(cell, reason)
        finally:
            for s in slots:
                ray.kill(s.actor, no_restart=True)


def _reachable(address: str) -> None:
    """Fail in seconds, not minutes (Ray retries an unreachable head for a long time)."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # "auto" and other forms: let Ray resolve them
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise AuditError(f"cannot connect to the Ray cluster at {address}: {e.strerror or e}") from None


class _RaySlot(_Slot):
    def __init__(self, actor: Any) -> None:
        super().__init__()
        self.actor = actor
        self.ref: Any = None

    def give(self, cell: Cell) -> None:
        self.cell, self.started = cell, time.monotonic()
        self.ref = self.actor.score.remote(cell)


def _encode(m: Any) -> bytes:
    import msgspec

    return msgspec.json.encode(m)


class _RayScorer:
    """The Ray actor: a Scorer of its own, built from the benchmark name and the manifest."""

    def __init__(
        self, benchmark: str, version: str | None, options: Mapping[str, Any], manifest: bytes, cwd: str
    ) -> None:
        import sys

        import msgspec

        from verimut import adapters
        from verimut.manifest import Manifest

        os.environ[WORKER_ENV] = "ray"
        # A `module:object` benchmark is found as on the command line: from the caller's directory
        # (on a cluster, that module must be importable on every node).
        if os.path.isdir(cwd) and cwd not in sys.path:
            sys.path.insert(0, cwd)

        adapter = adapters.load(benchmark, version, options)
        self.scorer = Scorer(adapter, msgspec.json.decode(manifest, type=Manifest))

    def score(self, cell: Cell) -> CellResult:
        return self.scorer.score(cell)


class Settings(NamedTuple):
    """What an executor may be given; each takes what it needs."""

    workers: int | None = None
    timeout: float = DEFAULT_TIMEOUT
    benchmark: str | None = None  # by name, for executors whose workers load the adapter themselves
    version: str | None = None
    options: Mapping[str, Any] = {}  # the adapter's options, as given to adapters.load
    address: str | None = None


EXECUTORS: Registry[Callable[[Settings], Executor]] = Registry("executor")
EXECUTORS.register("pool", lambda s: Pool(s.workers, s.timeout))
EXECUTORS.register("inprocess", lambda s: InProcess())
EXECUTORS.register("ray", lambda s: Ray(s.benchmark, s.version, s.workers, s.timeout, s.address, s.options))


def make(
    name: str,
    workers: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    benchmark: str | None = None,
    version: str | None = None,
    options: Mapping[str, Any] | None = None,
    address: str | None = None,
) -> Executor:
    if address is not None and name != "ray":
        raise AuditError("--address is for --executor ray")
    return EXECUTORS.get(name)(Settings(workers, timeout, benchmark, version, dict(options or {}), address))
