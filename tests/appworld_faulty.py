"""Test-only: the real AppWorld adapter, whose worker crashes or hangs once, mid-cell, on demand.

`verimut audit appworld_faulty:create` (from tests/) audits the synthetic suite with the real
engine and evaluator behind the real worker boundary. Its worker side (appworld_faulty_worker.py)
is the real `AppWorldBench`, but once the test creates the file named by $VERIMUT_TEST_ARM, the
next action it executes kills the worker process (`crash`) or never returns (`hang`), once per run.
"""

from __future__ import annotations

from pathlib import Path

from verimut.adapters import appworld
from verimut.adapters.remote import Remote

HERE = Path(__file__).resolve().parent


def create(version: str | None = None) -> Remote:
    env = appworld.environment(version)
    env["PYTHONPATH"] = str(appworld.WORKER_SIDE)  # the worker side imports the real appworld_world
    return Remote(appworld.PYTHON, "appworld_faulty_worker:FaultyAppWorldBench", cwd=HERE, env=env)
