"""A run's processes, from start to end: children that die with their parent, and a main process that
stops on SIGINT or SIGTERM and never waits on a benchmark's threads at exit.

A worker hung inside a verifier never reads its pipe again, so it cannot notice that its parent
was killed; without this it would run on, re-parented to PID 1, holding memory and maybe a lock.
Linux's parent-death signal has the kernel kill it instead. Elsewhere it is a no-op (the pool's
workers still notice a dead parent whenever they wait for work).

Ctrl-C reaches the whole process group, so every forked worker gets it too. Only the main process acts
on it (`on_signals`: SIGINT and SIGTERM raise KeyboardInterrupt there, so one path stops the work);
forked children ignore both (`quiet_child`) and end when their parent stops or kills them, or dies.
A child printing its own KeyboardInterrupt traceback, or dying mid-cell and so recorded as an `error`
cell, would be worse than useless: the parent decides.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import NoReturn

_PR_SET_PDEATHSIG = 1
STOPS = (signal.SIGINT, signal.SIGTERM)  # what stops a run: Ctrl-C, and a service manager's or `kill`'s default

_received: int | None = None  # the first stopping signal the main process received while `armed`
# Whether a stopping signal stops the command (`on_signals`). The command's caller clears it once the command is
# over, by a plain assignment inside its try (a handler cannot run halfway through one; one that runs just before
# raises where the caller catches it): a signal after that would only break the exit, with a traceback.
armed = False


def die_with_parent(parent: int | None = None) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies; exit now if it already has.

    `parent` is the pid expected as parent (read before fork): a parent that died between the fork
    and this call would be missed by the signal, which fires only on a death after it is set.
    """
    if sys.platform != "linux":
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent:
        os._exit(1)


# --- the main process ---------------------------------------------------------------------


def _stop(signum: int, frame: FrameType | None) -> None:
    global _received
    if not armed:
        return  # the command is over and exits within moments, with its own code
    if _received is None:
        _received = signum
    raise KeyboardInterrupt  # a second signal too: whoever sends it wants out now, not after the cleanup


def on_signals() -> None:
    """In the main process: SIGINT and SIGTERM both raise KeyboardInterrupt, so a `kill` stops a run as Ctrl-C does
    (workers stopped, ledger closed, the directory's lock released), rather than dying on the spot."""
    global armed
    if threading.current_thread() is not threading.main_thread():
        return  # signal.signal works in the main thread only (an embedding caller runs us elsewhere)
    armed = True
    for s in STOPS:
        signal.signal(s, _stop)


def received() -> int | None:
    """The stopping signal the main process received (`on_signals`), or None."""
    return _received


def leave(code: int) -> NoReturn:
    """End the main process with `code`, not waiting for a benchmark's threads.

    The interpreter joins every non-daemon thread before it exits: a verifier that started one and never
    stopped it would keep the finished run waiting forever. With such a thread left, or after a stopping
    signal, what was printed is flushed and the process ends at once. After a signal because a KeyboardInterrupt
    that once escaped code run through the C API's PyRun_String (some C extensions run Python that way) makes
    `python -m` end the process by SIGINT at exit, whatever code it was given (seen: -2 after the one line).
    """
    for child in mp.active_children():  # none by now; one left would ignore the SIGTERM multiprocessing ends it with
        child.kill()
        child.join()
    if threading.current_thread() is threading.main_thread():
        # The interpreter's finalization puts the default back for a signal with a Python handler, so a SIGTERM
        # in its last moments would kill the finished command (exit -15, nothing said); an ignored one stays so.
        for s in STOPS:
            signal.signal(s, signal.SIG_IGN)
    foreign = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if not foreign and _received is None:
        sys.exit(code)
    logging.shutdown()
    _flush()
    os._exit(code)


# --- forked children ----------------------------------------------------------------------


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Around a fork: a stopping signal waits until the fork is done. A child forked while one is being handled
    would inherit the main process's handler and raise KeyboardInterrupt (with a traceback) before `quiet_child`
    could ignore it; blocked, it stays pending until the child has its own handler in place (`quiet_child`)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread runs Python's signal handlers
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _ignore(signum: int, frame: FrameType | None) -> None:
    pass


def quiet_child(parent: int) -> None:
    """First thing in a forked child (forked under `signals_held`): die with the parent, ignore SIGINT and SIGTERM.

    Ignored by a handler that does nothing, not by SIG_IGN: an ignored disposition survives exec, so a helper a
    benchmark starts from the worker (a browser, a server) would ignore the SIGTERM it is stopped with, and the
    benchmark's wait for it would never end. A handler is reset to the default on exec.
    """
    die_with_parent(parent)
    for s in STOPS:
        signal.signal(s, _ignore)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)


_AT_CHILD_EXIT: list[Callable[[], None]] = []
_BEFORE_MAPS: list[tuple[Callable[[int], None], Callable[[], None]]] = []
_KEEPING: list[bool] = []  # [True] inside `kept_for_maps`
_SLOT: list[int] = []  # in a forked map's process: its place among the map's processes (`slot`)


def slot() -> int | None:
    """Which of its forked map's processes this one is (0 to n-1: the same number in every map of an audit), or
    None outside a map. A benchmark worker started ahead for a slot (`Remote.park`) is taken by that slot's
    process of each map in turn, so a browser starts once per slot, not once per map."""
    return _SLOT[0] if _SLOT else None


def take_slot(place: int) -> None:
    """Called by a forked map's process first (`verimut.engine.parallel`)."""
    _SLOT[:] = [place]


def before_maps(park: Callable[[int], None], unpark: Callable[[], None]) -> None:
    """Inside `kept_for_maps`, call `park(n)` in this process before it forks the n processes of a map (`mapping`),
    and `unpark()` at its end: a remote adapter starts a benchmark worker for each slot, which that slot's process
    of every map takes in turn (adapters/remote.py), and lets them go when the maps are over."""
    _BEFORE_MAPS.append((park, unpark))


@contextlib.contextmanager
def kept_for_maps() -> Iterator[None]:
    """The maps inside share what adapters keep per slot (`before_maps`): the manifest's, whose processes replay
    reference runs in a browser. Not the report's, which draws figures, nor the scoring workers."""
    _KEEPING[:] = [True]
    try:
        yield
    finally:
        _KEEPING[:] = []
        for _, unpark in _BEFORE_MAPS:
            unpark()


def mapping(n: int) -> None:
    """This process is about to fork a map's n processes (`before_maps`)."""
    if _KEEPING:
        for park, _ in _BEFORE_MAPS:
            park(n)


def at_child_exit(fn: Callable[[], None]) -> None:
    """Call `fn` when a forked child ends by `child_exit`, where atexit hooks do not run: a benchmark worker the
    child started (adapters/remote.py) is then let go by the end of its input and closes its browser, rather than
    die with the child and leave the browser's driver to fail on a closed pipe. `fn` must do nothing in a process
    that did not start what it releases (a child inherits its parent's list)."""
    _AT_CHILD_EXIT.append(fn)


def child_exit(code: int) -> NoReturn:
    """End a forked child with `code` without joining its threads (as multiprocessing would, before it exits):
    a verifier's leaked non-daemon thread would keep the worker alive until its parent killed it."""
    for fn in _AT_CHILD_EXIT:
        with contextlib.suppress(Exception):  # ending anyway
            fn()
    _flush()
    os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed or broken stream: nothing more can be said
            stream.flush()
