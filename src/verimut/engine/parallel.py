"""Forked children of this process, and a map over them (`forked_map`).

The executors' pool workers are forked with `start`, and read their work with `next_work`; the manifest's per-task
work (each reference run replayed twice, the census, the out-of-scope trial) and the report's figures run in
`forked_map`, which would otherwise run on one core while the others wait. Forked, because the work needs what
this process holds in memory (the adapter, the tasks' replays).

Every forked child ignores SIGINT and SIGTERM (a Ctrl-C reaches the whole process group; the parent stops or
kills its children, `verimut.core.children`) and ends with os._exit, never waiting on threads a benchmark left running.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, NoReturn, TypeVar

from verimut.core.children import child_exit, mapping, quiet_child, signals_held, take_slot
from verimut.core.errors import AuditError

T = TypeVar("T")
R = TypeVar("R")

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


def start(ctx: Any, target: Callable[..., None], *args: Any) -> Any:
    """A started child process that runs `target(*args)` (`_forked`)."""
    process = ctx.Process(target=_forked, args=(os.getpid(), target, *args), daemon=True)
    with signals_held():  # a Ctrl-C during the fork is handled here, after it, not in the child
        process.start()
    return process


def next_work(conn: Connection, parent: int) -> Any:
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


def _map_serve(fn: Callable[[Any], Any], conn: Connection, parent: int, place: int) -> None:
    # No WORKER_ENV: it marks the processes that score cells; what a map runs would otherwise run in this process.
    take_slot(place)
    while (got := next_work(conn, parent)) is not None:
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

    def __init__(self, ctx: Any, fn: Callable[[Any], Any], place: int) -> None:
        self.conn, child = ctx.Pipe()
        self.process = start(ctx, _map_serve, fn, child, os.getpid(), place)
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
    mapping(n)  # what the adapter keeps for each slot (a browser's worker) is started before the fork
    ctx = mp.get_context("fork")
    gc.freeze()  # as for the pool's workers: their collector leaves the inherited heap's pages shared
    procs: list[_Mapper] = []
    try:
        for _ in range(n):
            procs.append(_Mapper(ctx, fn, len(procs)))  # one by one: a Ctrl-C here stops those already started
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
