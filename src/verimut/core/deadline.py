"""A time limit on verimut's own work in this process (the manifest's fault families), so pure code that runs
away on some input (a pattern that backtracks on a 10 MB answer) ends the audit in one line naming what ran
past it, rather than never.

SIGALRM, so only in a process's main thread (the audit's, or a forked map child's): elsewhere, or while another
timer is already set, the block runs without a limit. Python's regular expressions check for signals while they
run, so the limit cuts a regex that would never finish.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Overrun(Exception):
    """The block ran past its time limit."""


@contextmanager
def limited(seconds: float) -> Iterator[None]:
    """Run the block; raise Overrun if it runs past `seconds` (see the module's docstring for where it applies)."""
    usable = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    if not usable or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise Overrun(f"ran past {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
