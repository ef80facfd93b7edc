"""runs.jsonl's CPU time of scoring counts the workers a run forked, not only its own process."""

from __future__ import annotations

import os
import time

from verimut.engine.pipeline import _cpu


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_cpu_time_counts_a_forked_worker_once_it_is_waited_for():
    before = _cpu()
    pid = os.fork()
    if pid == 0:  # the worker: burn CPU, then leave without running the parent's cleanup
        _spin(0.3)
        os._exit(0)
    os.waitpid(pid, 0)
    assert _cpu() - before >= 0.25
