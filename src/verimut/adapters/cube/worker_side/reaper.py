"""A process that stops another process's tree when the worker ends, however it ends.

verimut's worker is killed, not asked, when the process that started it ends (PR_SET_PDEATHSIG: a forked pool or
manifest process ends with os._exit), so its atexit never runs, and what it started and that does not end with its
parent stays, reparented to pid 1: chromedriver and its Chromium (miniwob-gym), the cube's `python -m http.server`
(miniwob; every audit left two).

`reap(pid, marker)` starts the reaper: it waits for the end of its stdin, a pipe whose write end only this worker
holds (closed by `release`, or by the kernel when the worker dies), then kills `pid` and every process under it,
by pid, if `pid`'s command line still holds `marker` (a reused pid is left alone).
"""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = r"""
import os, signal, sys
sys.stdin.buffer.read()
root, marker = int(sys.argv[1]), sys.argv[2].encode()
def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""
if marker in cmdline(root):
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parents[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    for pid in tree:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
"""


def reap(pid: int, marker: str) -> int:
    """Start the reaper of `pid`'s tree; returns the pipe's write end (`release` it to reap now)."""
    read, write = os.pipe()  # not inherited: only this process holds the write end
    with os.fdopen(read, "rb") as stdin:
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(pid), marker],
            stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    return write


def release(pipe: int) -> None:
    """Let the reaper act (what is left of the tree is killed)."""
    try:
        os.close(pipe)
    except OSError:
        pass
