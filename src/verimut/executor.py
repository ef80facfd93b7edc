"""Executors: how cells get scored. One seam; the pipeline does not care which is used.

Cells arrive in groups that share a replay (a task's fault cells share its reference run's
prefixes; a swap column shares one run). An executor gives a whole group to one worker, so the
worker's scorer reuses what it replayed, in batches (`Batches`: one cell at first, then as many as
take about `BATCH_SECONDS` at the measured cost per cell; small groups share a batch), and yields
each result as the worker finishes it (a Ray actor: in chunks, within `FLUSH_SECONDS`; see `_RayScorer`): the ledger stays with the caller (single writer) and a killed run loses only the cells
not yet returned. A batch saves a round trip per cell, which is most of a cheap cell's cost on Ray.

A cell that runs past the timeout is cut (its worker killed and replaced) and recorded as
`error`; a worker that dies is replaced and its cell recorded as `error`; the rest of its batch
and group goes on in the new worker. The timeout runs per cell: from the moment the worker
returned the previous cell of its batch. Worker processes have VERIMUT_WORKER set in their
environment (to the executor's name). `startup_seconds` is what starting workers cost (Ray's
start and each actor's adapter load), reported apart from scoring; Ray's actors are started once
per scorer, so an audit's two runs (the controls, then the rest) share them and what they replayed.

An executor also maps a function over independent items (`map`): the per-task work of building the
manifest (each reference run replayed twice, the census, the out-of-scope trial) and the report's
figures, which would otherwise run on one core while the others wait. The pool and Ray both map in
forked processes on this machine (`forked_map`): the work needs what this process holds in memory
(the adapter, the tasks' replays).

Every forked child ignores SIGINT and SIGTERM (a Ctrl-C reaches the whole process group; the parent stops or
kills its children, `verimut.children`) and ends with os._exit, never waiting on threads a benchmark left running.
"""

from __future__ import annotations

import abc
import gc
import logging
import math
import multiprocessing as mp
import os
import queue
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection, wait
from typing import Any, NamedTuple, NoReturn, Protocol, TypeVar

import msgspec

from verimut.children import child_exit, quiet_child, signals_held
from verimut.errors import AuditError
from verimut.records import Cell, CellResult
from verimut.registry import Registry
from verimut.scorer import Scorer

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 300.0
STOP_SECONDS = 120.0  # how long a worker told to stop may take to release its kept episodes before it is killed
WORKER_ENV = "VERIMUT_WORKER"

Group = Sequence[Cell]
T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    name: str
    startup_seconds: float  # starting workers, summed over this executor's runs (not scoring)

    def run(self, scorer: Scorer, groups: Iterable[Group]) -> Iterator[CellResult]: ...

    def map(self, fn: Callable[[T], R], items: Sequence[T], limit: int | None = None) -> Iterator[R]:
        """fn over items, results in items' order, at most `limit` at once (None: no limit of the caller's).
        fn's results cross a process boundary (pickled); fn itself need not (it is inherited)."""
        ...

    def close(self) -> None:
        """Release what the executor holds between runs (a Ray connection)."""
        ...


class InProcess:
    """Score cells one after another in this process (no timeout: a hanging cell hangs the run)."""

    name = "inprocess"
    startup_seconds = 0.0

    def close(self) -> None:
        pass

    def map(self, fn: Callable[[T], R], items: Sequence[T], limit: int | None = None) -> Iterator[R]:
        return (fn(x) for x in items)

    def run(self, scorer: Scorer, groups: Iterable[Group]) -> Iterator[CellResult]:
        try:
            for group in groups:
                for cell in group:
                    yield scorer.score(cell)
        finally:
            scorer.close()


def _check(workers: int | None, timeout: float) -> int:
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


class _Slot(abc.ABC):
    """What one worker holds: the rest of its group, and the batch it was sent (its first cell in flight
    since `started`). A pool process and a Ray actor differ only in how a batch is sent."""

    def __init__(self) -> None:
        self.queue: list[Cell] = []
        self.batch: list[Cell] = []
        self.started = 0.0

    @property
    def cell(self) -> Cell | None:
        return self.batch[0] if self.batch else None

    @abc.abstractmethod
    def send(self, batch: list[Cell]) -> None: ...

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


def _feed(slots: Sequence[Any], pending: list[list[Cell]], batches: Batches) -> list[Any]:
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


def _wake(busy: Sequence[_Slot], timeout: float) -> float:
    """Seconds until the first cell in flight runs out of time."""
    return max(0.0, min(w.started + timeout for w in busy) - time.monotonic())


# --- forked children -----------------------------------------------------------------------

MAP_STOP_SECONDS = 5.0  # how long an idle map process told to stop may take to end (it holds nothing)


def _forked(parent: int, target: Callable[..., None], *args: Any) -> NoReturn:
    """A forked child's whole life: `target`, then the end of the process, with multiprocessing's exit codes (a
    SystemExit's code; 1 and the traceback for an exception), but never returning into multiprocessing, which
    joins the child's threads first: with a verifier's leaked non-daemon thread, each pool worker's stop waited
    out STOP_SECONDS before the kill (a run that scores in 0.03 s took 360 s), and the manifest's map never ended."""
    quiet_child(parent)  # first: a Ctrl-C to the process group is the parent's to handle
    code = 0
    try:
        target(*args)
    except SystemExit as e:  # a verifier's sys.exit(3): its worker's death reads "exit code 3", as before
        code = e.code if isinstance(e.code, int) else int(e.code is not None)
        if not isinstance(e.code, int | None):
            print(e.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001  (the process ends here whatever it was)
        traceback.print_exc()
        code = 1
    child_exit(code)


def _start(ctx: Any, target: Callable[..., None], *args: Any) -> Any:
    """A started child process that runs `target(*args)` (`_forked`)."""
    process = ctx.Process(target=_forked, args=(os.getpid(), target, *args), daemon=True)
    with signals_held():  # a Ctrl-C during the fork is handled here, after it, not in the child
        process.start()
    return process


def _next(conn: Connection, parent: int) -> Any:
    """A child's next piece of work from its pipe; None to stop (told to, or the parent is gone)."""
    while not conn.poll(1.0):
        # A killed parent does not close this pipe (sibling workers hold copies of its end), so notice the
        # parent's death by being re-parented, rather than wait forever.
        if os.getppid() != parent:
            return None
    try:
        return conn.recv()
    except EOFError:
        return None


# --- a map over forked processes ----------------------------------------------------------


class _RemoteTraceback(Exception):
    """The traceback of an exception raised in a map process, as its cause (printed with an internal error)."""

    def __str__(self) -> str:
        return str(self.args[0])


def _map_serve(fn: Callable[[Any], Any], conn: Connection, parent: int) -> None:
    # No WORKER_ENV: it marks the processes that score cells; what a map runs would otherwise run in this process.
    while (got := _next(conn, parent)) is not None:
        i, item = got
        try:
            reply = (i, True, fn(item))
        except BaseException as e:  # noqa: BLE001  (raised in the caller, at its item)
            reply = (i, False, (e, traceback.format_exc()))
        try:
            conn.send(reply)
        except Exception as e:  # noqa: BLE001  (a result or exception that cannot be pickled; nothing was sent)
            why = RuntimeError(f"a result of the forked map could not be sent back: {type(e).__name__}: {e}")
            conn.send((i, False, (why, traceback.format_exc())))


class _Mapper:
    """One map process and the index of the item it was given (None: idle)."""

    def __init__(self, ctx: Any, fn: Callable[[Any], Any]) -> None:
        self.conn, child = ctx.Pipe()
        self.process = _start(ctx, _map_serve, fn, child, os.getpid())
        child.close()
        self.item: int | None = None

    def give(self, i: int, item: Any) -> None:
        try:
            self.conn.send((i, item))
        except OSError:  # its end closed: it died; the caller sees its sentinel
            pass
        self.item = i


def _died() -> AuditError:
    return AuditError(
        "a process forked to build the manifest or draw the report died (killed, or the benchmark crashed "
        "it); run again with --executor inprocess to see the benchmark's own error"
    )


def forked_map(fn: Callable[[T], R], items: Sequence[T], workers: int) -> Iterator[R]:
    """fn over items in `workers` processes forked from this one, results in order.

    Forked, so fn may close over anything this process holds (the adapter, every task's replays); only
    items and results are pickled. One item per call: tasks differ in cost by orders of magnitude (a
    task with twenty writes runs twenty out-of-scope trials), so a fixed share per process would leave
    one core idle while the other finishes. An exception fn raises is raised here, at its item.

    Its own processes rather than concurrent.futures' pool: that pool's shutdown waits on its processes, which
    waited on the threads a benchmark left running, and a Ctrl-C that caught them inside its queue's lock
    hung it for good. These end without joining threads (`_forked`); stopped early (an error, a Ctrl-C),
    the busy ones are killed, and an idle one that does not end within MAP_STOP_SECONDS is too.
    """
    n = min(workers, len(items))
    if n <= 1:
        yield from (fn(x) for x in items)
        return
    ctx = mp.get_context("fork")
    gc.freeze()  # as for the pool's workers: their collector leaves the inherited heap's pages shared
    procs: list[_Mapper] = []
    try:
        for _ in range(n):
            procs.append(_Mapper(ctx, fn))  # one by one: a Ctrl-C here stops those already started
        done: dict[int, tuple[bool, Any]] = {}
        given = 0
        for i in range(len(items)):
            while i not in done:
                for p in procs:
                    if p.item is None and given < len(items):
                        p.give(given, items[given])
                        given += 1
                busy = [p for p in procs if p.item is not None]
                ready = wait([p.conn for p in busy] + [p.process.sentinel for p in busy])
                for p in busy:
                    if p.conn in ready:  # before its sentinel: a process may send its result and then die
                        try:
                            j, ok, value = p.conn.recv()
                        except (EOFError, OSError):
                            raise _died() from None
                        done[j], p.item = (ok, value), None
                    elif p.process.sentinel in ready:
                        raise _died()
            ok, value = done.pop(i)
            if not ok:
                e, remote = value
                e.__cause__ = _RemoteTraceback(remote)
                raise e
            yield value
    finally:
        _stop_map(procs)
        gc.unfreeze()


def _stop_map(procs: list[_Mapper]) -> None:
    for p in procs:
        if p.item is not None:  # stopped early: its item's result is not wanted
            p.process.kill()
        else:
            try:
                p.conn.send(None)
            except OSError:
                pass
    for p in procs:
        p.process.join(timeout=MAP_STOP_SECONDS)
        if p.process.is_alive():
            p.process.kill()
            p.process.join()
        p.conn.close()


# --- a local process pool ----------------------------------------------------------------


def _serve(scorer: Scorer, conn: Connection, parent: int) -> None:
    os.environ[WORKER_ENV] = "pool"
    try:
        while (batch := _next(conn, parent)) is not None:
            for cell in batch:
                conn.send(scorer.score(cell))
    finally:
        scorer.close()  # a forked worker runs no atexit hook: what it kept live is released here


class _Process(_Slot):
    def __init__(self, ctx: Any, scorer: Scorer) -> None:
        super().__init__()
        self.conn, child = ctx.Pipe()
        # What the worker inherits (the adapter's suites, the manifest) is out of its collector's reach: a
        # collection there would write to every inherited object's header, copying the pages it shares with
        # this process (counted on the census: 68,000 minor page faults in the workers, 17,000 frozen).
        gc.freeze()
        self.process = _start(ctx, _serve, scorer, child, os.getpid())
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


class Pool:
    """Score cells in forked worker processes (they share the adapter loaded in this process)."""

    name = "pool"

    def __init__(self, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.workers = _check(workers, timeout)
        self.timeout = timeout
        self.startup_seconds = 0.0
        self.batches = Batches()

    def close(self) -> None:
        pass

    def map(self, fn: Callable[[T], R], items: Sequence[T], limit: int | None = None) -> Iterator[R]:
        return forked_map(fn, items, min(self.workers, limit or self.workers))

    def run(self, scorer: Scorer, groups: Iterable[Group]) -> Iterator[CellResult]:
        pending = [list(g) for g in groups if g]
        pending.reverse()  # pop() from the end keeps manifest order
        if not pending:
            return
        ctx = mp.get_context("fork")
        # A benchmark on shared live state (one WorkArena instance) says how many cells it takes at once.
        limit = scorer.bench.concurrency or self.workers
        began = time.monotonic()
        pool: list[_Process] = []
        try:
            for _ in range(min(self.workers, len(pending), limit)):
                pool.append(_Process(ctx, scorer))  # one by one: a Ctrl-C here stops those already started
            self.startup_seconds += time.monotonic() - began
            yield from self._drive(ctx, scorer, pool, pending)
        finally:
            for w in pool:
                w.stop(kill=bool(w.batch))
            gc.unfreeze()  # this process's own garbage from before the workers started may be collected again

    def _drive(self, ctx: Any, scorer: Scorer, pool: list[_Process], pending: list[list[Cell]]) -> Iterator[CellResult]:
        batches = self.batches  # the cost measured in an earlier run (the controls) sizes this one's batches
        while True:
            busy = _feed(pool, pending, batches)
            if not busy:
                return
            wake = _wake(busy, self.timeout)
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=wake)
            for n, w in enumerate(pool):
                if not w.batch:
                    continue
                if w.conn in ready:
                    got = False
                    for result in w.results():
                        got = True
                        batches.add(result)
                        yield result
                    if got:
                        continue  # a death or a timeout shows on the next wait
                cell = w.batch[0]
                reason = None
                if w.process.sentinel in ready or not w.process.is_alive():
                    # Its pipe can close a moment before it can be reaped: wait, so the code is known.
                    w.process.join(timeout=5)
                    reason = f"the worker scoring this cell died (exit code {w.process.exitcode})"
                elif time.monotonic() - w.started >= self.timeout:
                    reason = f"timed out after {self.timeout:g} s"
                if reason is not None:
                    w.stop(kill=True)
                    pool[n] = _Process(ctx, scorer)
                    pool[n].queue = w.leftover()  # the rest of the batch and group go on in the new worker
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
        self.startup_seconds = 0.0
        self.batches = Batches()
        self._actors: list[Any] = []  # kept between runs on one scorer; killed on close()
        self._spawn: Callable[[], Any] | None = None
        self._scorer: Scorer | None = None
        self._owned = False  # whether this executor connected (or started Ray), so must close it
        if address:  # fail now, before any work, when the cluster cannot be reached
            self._start()

    def map(self, fn: Callable[[T], R], items: Sequence[T], limit: int | None = None) -> Iterator[R]:
        # On this machine's cores, not the cluster's: the work needs what this process holds in memory.
        here = min(self.workers, os.cpu_count() or 1)
        return forked_map(fn, items, min(here, limit or here))

    def close(self) -> None:
        import ray

        if ray.is_initialized():
            self._release()
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
        pending = [list(g) for g in groups if g]
        pending.reverse()
        if not pending:
            return
        began = time.monotonic()
        spawn = self._crew(scorer, min(self.workers, len(pending), scorer.bench.concurrency or self.workers))
        self.startup_seconds += time.monotonic() - began
        slots = [_RaySlot(actor) for actor in self._actors[: len(pending)]]
        try:
            yield from self._drive(scorer, slots, pending, spawn)
        finally:
            # A cut cell's actor was replaced: keep the live ones for the next run on this scorer.
            self._actors[: len(slots)] = [s.actor for s in slots]
            if any(s.batch for s in slots):  # stopped with batches in flight: those actors are still busy
                self._release(idle=False)

    def _crew(self, scorer: Scorer, n: int) -> Callable[[], Any]:
        """The actors for this scorer, started (and their adapters loaded) once: an audit's controls and the
        rest of its cells are two runs, and the second keeps what the first loaded and replayed."""
        import ray

        if self._scorer is not scorer:
            self._release()
        self._start()
        if self._spawn is None:
            actor_cls = ray.remote(num_cpus=1, max_restarts=0)(_RayScorer)
            # An actor's scorer needs the tasks' facts, not the cells (they come in batches): a swap manifest of
            # 1,000 tasks holds a million cells, which every actor would otherwise decode.
            manifest = ray.put(_encode(msgspec.structs.replace(scorer.manifest, cells=[])))
            options, cwd = self.options, os.getcwd()
            self._spawn = lambda: actor_cls.remote(self.benchmark, self.version, options, manifest, cwd)
            self._scorer = scorer
        spawn = self._spawn
        if len(self._actors) < n:
            fresh = [spawn() for _ in range(n - len(self._actors))]
            _ready(fresh)  # start-up apart from scoring: each loads the adapter before its first batch
            self._actors += fresh
        return spawn

    def _release(self, idle: bool = True) -> None:
        import ray

        if idle and self._actors:
            # A killed actor runs no exit hook: what its scorer kept live (a WorkArena session) is released first.
            try:
                ray.get([a.close.remote() for a in self._actors], timeout=60)
            except Exception as e:  # noqa: BLE001  (best effort: the actors are killed next whatever happened)
                log.warning("releasing the Ray actors' kept episodes: %s", e)
        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        self._actors, self._spawn, self._scorer = [], None, None

    def _drive(
        self, scorer: Scorer, slots: list[_RaySlot], pending: list[list[Cell]], spawn: Callable[[], Any]
    ) -> Iterator[CellResult]:
        import ray

        batches = self.batches  # the cost measured in an earlier run (the controls) sizes this one's batches
        while True:
            busy = _feed(slots, pending, batches)
            if not busy:
                return
            wake = _wake(busy, self.timeout)
            done, _ = ray.wait([s.stream for s in busy], num_returns=1, timeout=wake)
            for n, s in enumerate(slots):
                if not s.batch:
                    continue
                cell = s.batch[0]
                reason = None
                if s.stream in done:
                    try:
                        for result in s.results():
                            batches.add(result)
                            yield result
                    except ray.exceptions.RayActorError as e:
                        if not s.careful:
                            # Its finished cells may have died with it, unsent: which cell killed it is not known
                            # yet. They are scored again, one call each, and a death there names its cell.
                            log.warning("a Ray worker died in a batch (%s): scoring its cells again one at a time", e)
                            slots[n] = _RaySlot(self._replacement(spawn), careful=len(s.batch))
                            slots[n].queue = s.batch + s.queue
                            continue
                        reason = f"the worker scoring this cell died ({type(e).__name__})"
                    except ray.exceptions.RayError as e:
                        reason = f"scoring raised in the worker: {str(e).strip().splitlines()[-1]}"
                    if reason is None:
                        continue
                    cell = s.batch[0]
                elif time.monotonic() - s.started >= self.timeout:
                    reason = f"timed out after {self.timeout:g} s"
                if reason is not None:
                    ray.kill(s.actor, no_restart=True)
                    slots[n] = _RaySlot(self._replacement(spawn), careful=max(0, s.careful - 1))
                    slots[n].queue = s.leftover()
                    yield scorer.failed(cell, reason)

    def _replacement(self, spawn: Callable[[], Any]) -> Any:
        """A new actor for a cut or dead one, loaded before it is given work: its start-up (seconds, on a busy
        machine) must not count against the timeout of the first cell it scores."""
        began = time.monotonic()
        actor = spawn()
        _ready([actor])
        self.startup_seconds += time.monotonic() - began
        return actor


def _ready(actors: Sequence[Any]) -> None:
    import ray

    try:
        ray.get([a.ready.remote() for a in actors])
    except ray.exceptions.RayError as e:
        first = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        raise AuditError(f"a Ray worker could not load the benchmark: {first}") from None


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
    """An actor and its batch. An actor streams results back in chunks (`FLUSH_SECONDS`); after a death,
    `careful` counts the cells still to be scored one per call, so that a death there is its cell's."""

    def __init__(self, actor: Any, careful: int = 0) -> None:
        super().__init__()
        self.actor = actor
        self.careful = careful
        self.stream: Any = None  # the batch's results, as Ray streams them back (a list of cells per item)

    def send(self, batch: list[Cell]) -> None:
        self.stream = self.actor.score.options(num_returns="streaming").remote(batch)

    def batch_size(self, batches: Batches) -> int:
        return 1 if self.careful else batches.size()

    def returned(self, result: CellResult) -> None:
        super().returned(result)
        self.careful = max(0, self.careful - 1)

    def results(self) -> Iterator[CellResult]:
        """The results Ray already holds, in batch order (raises what the actor raised, after the results
        that came before it)."""
        import ray

        refs: list[Any] = []
        while self.stream.next_ready():
            try:
                refs.append(next(self.stream))
            except StopIteration:  # the stream's end counts as ready
                break
        try:
            chunks: list[list[CellResult]] = ray.get(refs)  # one call for all that arrived: a call each costs more
        except ray.exceptions.RayError:
            for ref in refs:  # the results before the failure are returned; it raises on the cell after them
                yield from self._took(ray.get(ref))
            return
        for chunk in chunks:
            yield from self._took(chunk)

    def _took(self, chunk: list[CellResult]) -> Iterator[CellResult]:
        for result in chunk:
            self.returned(result)
            yield result


def _encode(m: Any) -> bytes:
    return msgspec.json.encode(m)


# An actor sends what it has scored at most this long after the first of it is done: each item Ray streams
# back costs about as much as scoring a cheap cell, so results travel in chunks, while a hang behind them
# still finds every finished cell returned (the cut falls on the cell that hangs).
FLUSH_SECONDS = 0.02


class _RayScorer:
    """The Ray actor: a Scorer of its own, built from the benchmark name and the manifest.

    The scorer lives in one thread of its own (it loads the adapter, scores every cell, releases the
    episodes), so a benchmark bound to the thread that started it (Playwright's sync API) sees one thread,
    while the actor's method thread streams the results back in chunks as they finish.
    """

    def __init__(
        self, benchmark: str, version: str | None, options: Mapping[str, Any], manifest: bytes, cwd: str
    ) -> None:
        os.environ[WORKER_ENV] = "ray"
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verimut-scorer")
        self.scorer = self._thread.submit(_ray_scorer, benchmark, version, options, manifest, cwd).result()

    def ready(self) -> bool:
        return True

    def score(self, batch: list[Cell]) -> Iterator[list[CellResult]]:
        done: queue.SimpleQueue[CellResult | BaseException] = queue.SimpleQueue()
        self._thread.submit(_score_into, self.scorer, batch, done)
        left = len(batch)
        while left:
            chunk = [done.get()]
            flush = time.monotonic() + FLUSH_SECONDS
            while len(chunk) < left and not isinstance(chunk[-1], BaseException):
                try:
                    chunk.append(done.get(timeout=max(0.0, flush - time.monotonic())))
                except queue.Empty:
                    break
            last = chunk[-1]
            failed = last if isinstance(last, BaseException) else None
            results = [r for r in chunk if isinstance(r, CellResult)]
            if results:
                yield results
            if failed is not None:
                raise failed  # the scorer raised: what it scored before is sent first
            left -= len(results)

    def close(self) -> None:
        self._thread.submit(self.scorer.close).result()


def _ray_scorer(benchmark: str, version: str | None, options: Mapping[str, Any], manifest: bytes, cwd: str) -> Scorer:
    import sys

    from verimut import adapters
    from verimut.records import Manifest

    # A `module:object` benchmark is found as on the command line: from the caller's directory
    # (on a cluster, that module must be importable on every node).
    if os.path.isdir(cwd) and cwd not in sys.path:
        sys.path.insert(0, cwd)
    adapter = adapters.load(benchmark, version, options)
    return Scorer(adapter, msgspec.json.decode(manifest, type=Manifest))


def _score_into(scorer: Scorer, batch: list[Cell], done: queue.SimpleQueue[CellResult | BaseException]) -> None:
    for cell in batch:
        try:
            result: CellResult | BaseException = scorer.score(cell)
        except BaseException as e:  # noqa: BLE001  (raised to Ray by the actor's method, as the pool's worker dies)
            done.put(e)
            return
        done.put(result)


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
