"""Child processes that die with the process that started them, however it dies.

A worker hung inside a verifier never reads its pipe again, so it cannot notice that its parent
was killed; without this it would run on, re-parented to PID 1, holding memory and maybe a lock.
Linux's parent-death signal has the kernel kill it instead. Elsewhere it is a no-op (the pool's
workers still notice a dead parent whenever they wait for work).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


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
