"""The to-do example whose scoring process is killed by a signal, as the OOM killer or a user would kill it
(issue 43, item 1): the first time a given cell's run is verified (counted in a file per cell in $VERIMUT_KILLED_DIR),
the process SIGKILLs itself, $VERIMUT_KILLS times (default 1); after that, it verifies as the example does.

Killed, not exited: `os._exit(3)` is the benchmark's own doing and stays an error (tests/troublebench.py); a
signal's death is the machinery's, and its cell is scored again.
"""

from __future__ import annotations

import hashlib
import os
import signal
from pathlib import Path
from typing import Any

from examples.todo_bench import TodoBench

from verimut import Run, Verdict

DIR_ENV = "VERIMUT_KILLED_DIR"
KILLS_ENV = "VERIMUT_KILLS"  # how many times each such cell's process is killed (default 1)
CONTROL_ENV = "VERIMUT_KILL_CONTROL"  # a task whose reference run's verification is killed too (its control)


class KilledBench(TodoBench):
    name = "todo-killed"

    def verify(self, episode: dict[str, Any], run: Run) -> Verdict:
        where = os.environ.get(DIR_ENV)
        reference = os.environ.get(CONTROL_ENV) == episode["task"] and run == self.reference(episode["task"], None)
        if where and (episode["items"].count("buy milk") == 2 or reference):  # add_milk's extra, or that control
            count = Path(where) / hashlib.sha256(repr(run).encode()).hexdigest()[:16]
            kills = int(count.read_text()) if count.exists() else 0
            if kills < int(os.environ.get(KILLS_ENV, "1")):
                count.write_text(str(kills + 1))
                os.kill(os.getpid(), signal.SIGKILL)
        return super().verify(episode, run)


benchmark = KilledBench()
