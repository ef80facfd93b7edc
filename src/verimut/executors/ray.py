"""Score cells in Ray actors: a local Ray instance started here, or a cluster at `address`.

Each actor is sent the scorer factory (pickled once: how to load the adapter, and the manifest without its cells),
builds its scorer with it, and so loads the adapter itself: nothing but cells and results crosses the wire. Actors
are started once per factory, so an audit's two runs (the controls, then the rest) share them and what they
replayed. An actor streams its results back in chunks, within `FLUSH_SECONDS` (see `_RayScorer`).
"""

from __future__ import annotations

import logging
import os
import queue
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from verimut.core.errors import AuditError
from verimut.core.records import Cell, CellResult
from verimut.engine import executor as seam
from verimut.engine.executor import DEFAULT_TIMEOUT, WORKER_ENV, Group, ScorerFactory, Scores, Settings
from verimut.engine.parallel import forked_map
from verimut.executors.drive import Lost, Pending, Slot, drive

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


class Ray:
    """Score cells in Ray actors: a local Ray instance started here, or a cluster at `address`."""

    name = "ray"

    def __init__(
        self, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT, address: str | None = None
    ) -> None:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise AuditError(
                "--executor ray needs Ray: install verimut with the 'ray' extra (pip install 'verimut[ray]')"
            ) from None
        self.workers = seam.check(workers, timeout)
        self.timeout = timeout
        self.address = address
        self.startup_seconds = 0.0
        self.batches = seam.Batches()
        self._actors: list[Any] = []  # kept between runs on one factory; killed on close()
        self._spawn: Callable[[], Any] | None = None
        self._factory: ScorerFactory | None = None
        self._owned = False  # whether this executor connected (or started Ray), so must close it
        self._env: dict[str, str] = {}  # RAY_* variables before ray.init: it sets some (RAY_AUTH_MODE) for good
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
        if self._owned:
            _restore_ray_env(self._env)
        self._owned = False

    def _start(self) -> None:
        """Connect to the cluster, or start a local instance, once; later calls reuse it."""
        import ray

        if ray.is_initialized():
            return
        self._env = _ray_env()
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

    def run(self, factory: ScorerFactory, groups: Iterable[Group]) -> Iterator[CellResult]:
        if not factory.portable:
            raise AuditError("--executor ray needs the benchmark by name (a built-in name or module:object)")
        pending = Pending(groups)
        if not pending:
            return
        began = time.monotonic()
        spawn = self._crew(factory, min(self.workers, pending.count(self.workers), factory.concurrency or self.workers))
        self.startup_seconds += time.monotonic() - began
        slots = [_RaySlot(actor) for actor in self._actors[: pending.count(len(self._actors))]]

        def replace(old: _RaySlot, again: bool) -> _RaySlot:
            # After a death in a batch, its cells go again one per call; after a cut, one fewer of them does.
            careful = len(old.batch) if again else max(0, old.careful - 1)
            return _RaySlot(self._replacement(spawn), careful=careful)

        try:
            yield from drive(slots, pending, self.batches, self.timeout, _ready_streams, replace, _failed_here(factory))
        finally:
            # A cut cell's actor was replaced: keep the live ones for the next run on this factory.
            self._actors[: len(slots)] = [s.actor for s in slots]
            if any(s.batch for s in slots):  # stopped with batches in flight: those actors are still busy
                self._release(idle=False)

    def _crew(self, factory: ScorerFactory, n: int) -> Callable[[], Any]:
        """The actors for this factory, started (and their adapters loaded) once: an audit's controls and the
        rest of its cells are two runs, and the second keeps what the first loaded and replayed."""
        import ray

        if self._factory is not factory:
            self._release()
        self._start()
        if self._spawn is None:
            actor_cls = ray.remote(num_cpus=1, max_restarts=0)(_RayScorer)
            # Pickled once: an actor's scorer needs the tasks' facts, not the cells (they come in batches): a swap
            # manifest of 1,000 tasks holds a million cells, which every actor would otherwise decode.
            sent = ray.put(factory)
            self._spawn = lambda: actor_cls.remote(sent)
            self._factory = factory
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
        self._actors, self._spawn, self._factory = [], None, None

    def _replacement(self, spawn: Callable[[], Any]) -> Any:
        """A new actor for a cut or dead one, loaded before it is given work: its start-up (seconds, on a busy
        machine) must not count against the timeout of the first cell it scores."""
        began = time.monotonic()
        actor = spawn()
        _ready([actor])
        self.startup_seconds += time.monotonic() - began
        return actor


def _failed_here(factory: ScorerFactory) -> Callable[[Cell, str], CellResult]:
    def failed(cell: Cell, reason: str) -> CellResult:
        return factory().failed(cell, reason)  # this process's scorer: the row needs the manifest, not a replay

    return failed


def _ready_streams(busy: list[_RaySlot], seconds: float) -> Collection[_RaySlot]:
    import ray

    done, _ = ray.wait([s.stream for s in busy], num_returns=1, timeout=seconds)
    return [s for s in busy if s.stream in done]


def _ready(actors: Sequence[Any]) -> None:
    import ray

    try:
        ray.get([a.ready.remote() for a in actors])
    except ray.exceptions.RayError as e:
        first = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        raise AuditError(f"a Ray worker could not load the benchmark: {first}") from None


def _ray_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("RAY_")}


def _restore_ray_env(before: dict[str, str]) -> None:
    """Put the RAY_* variables back as they were before ray.init: it leaves RAY_AUTH_MODE=token in this process,
    which a later connection from it (or a process it starts) to a cluster without authentication then fails on
    (a Ray actor "cancelled before it started running")."""
    for k in [k for k in os.environ if k.startswith("RAY_") and k not in before]:
        del os.environ[k]
    os.environ.update(before)


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


class _RaySlot(Slot):
    """An actor and its batch. An actor streams results back in chunks (`FLUSH_SECONDS`); after a death,
    `careful` counts the cells still to be scored one per call, so that a death there is its cell's."""

    def __init__(self, actor: Any, careful: int = 0) -> None:
        super().__init__()
        self.actor = actor
        self.careful = careful
        self.stream: Any = None  # the batch's results, as Ray streams them back (a list of cells per item)

    def send(self, batch: list[Cell]) -> None:
        self.stream = self.actor.score.options(num_returns="streaming").remote(batch)

    def batch_size(self, batches: seam.Batches) -> int:
        return 1 if self.careful else batches.size()

    def returned(self, result: CellResult) -> None:
        super().returned(result)
        self.careful = max(0, self.careful - 1)

    def stop(self, kill: bool = False) -> None:
        import ray

        ray.kill(self.actor, no_restart=True)

    def results(self) -> Iterator[CellResult]:
        """The results Ray already holds, in batch order; `Lost` for what the actor raised or its death, after
        the results that came before it."""
        import ray

        try:
            yield from self._results()
        except ray.exceptions.RayActorError as e:
            if not self.careful:
                # Its finished cells may have died with it, unsent: which cell killed it is not known yet. They
                # are scored again, one call each, and a death there names its cell.
                log.warning("a Ray worker died in a batch (%s): scoring its cells again one at a time", e)
                raise Lost(str(e), again=True) from None
            raise Lost(f"the worker scoring this cell died ({type(e).__name__})") from None
        except ray.exceptions.RayError as e:
            raise Lost(f"scoring raised in the worker: {str(e).strip().splitlines()[-1]}") from None

    def _results(self) -> Iterator[CellResult]:
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


# An actor sends what it has scored at most this long after the first of it is done: each item Ray streams
# back costs about as much as scoring a cheap cell, so results travel in chunks, while a hang behind them
# still finds every finished cell returned (the cut falls on the cell that hangs).
FLUSH_SECONDS = 0.02


class _RayScorer:
    """The Ray actor: a scorer of its own, built by the factory it is sent.

    The scorer lives in one thread of its own (it loads the adapter, scores every cell, releases the
    episodes), so a benchmark bound to the thread that started it (Playwright's sync API) sees one thread,
    while the actor's method thread streams the results back in chunks as they finish.
    """

    def __init__(self, factory: ScorerFactory) -> None:
        os.environ[WORKER_ENV] = "ray"
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verimut-scorer")
        self.scorer = self._thread.submit(factory).result()

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


def _score_into(scorer: Scores, batch: list[Cell], done: queue.SimpleQueue[CellResult | BaseException]) -> None:
    for cell in batch:
        try:
            result: CellResult | BaseException = scorer.score(cell)
        except BaseException as e:  # noqa: BLE001  (raised to Ray by the actor's method, as the pool's worker dies)
            done.put(e)
            return
        done.put(result)


def make(settings: Settings) -> Ray:
    return Ray(settings.workers, settings.timeout, settings.address)
