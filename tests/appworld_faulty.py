"""Test-only: the real AppWorld adapter, whose worker crashes or hangs once, mid-cell, on demand.

`verimut audit appworld_faulty:create` (from tests/) audits the synthetic suite with the real
engine and evaluator behind the real worker boundary. Its worker side (appworld_faulty_worker.py)
is the real `AppWorldBench`, but once the test creates the file named by $VERIMUT_TEST_ARM, the
next action it executes kills the worker process (`crash`) or never returns (`hang`), once per run.
"""

from __future__ import annotations

import os
from pathlib import Path

from verimut.adapters import appworld
from verimut.adapters.remote import Remote

HERE = Path(__file__).resolve().parent


def create(version: str | None = None) -> Remote:
    # Run from tests/: AppWorld's environment is the repository's, unless named otherwise.
    interpreter = appworld.python(os.environ.get(appworld.PYTHON_ENV) or HERE.parent / appworld.DEFAULT_PYTHON)
    env = appworld.environment(version, interpreter)
    env["PYTHONPATH"] = str(appworld.WORKER_SIDE)  # the worker side imports the real appworld_world
    return Remote(interpreter, "appworld_faulty_worker:FaultyAppWorldBench", cwd=HERE, env=env)
