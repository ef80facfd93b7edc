"""A plug-in for tests/cli/test_signals.py: the to-do example, slowed so that a signal lands in the phase a test waits for.

`VERIMUT_TEST_SLEEP` seconds (default 0) in each reference run, which only the manifest's build asks for (in
the processes the pool forks for it), and in each verifier call, most of which the pool's workers make. With 0
it is the to-do example, cell for cell: the uninterrupted result a resumed run must reproduce.
"""

from __future__ import annotations

import os
import time

from examples.todo_bench import TodoBench


def _nap() -> None:
    time.sleep(float(os.environ.get("VERIMUT_TEST_SLEEP", "0")))


class Slow(TodoBench):
    def reference(self, task, episode):
        _nap()
        return super().reference(task, episode)

    def verify(self, episode, run):
        _nap()
        return super().verify(episode, run)


benchmark = Slow()
