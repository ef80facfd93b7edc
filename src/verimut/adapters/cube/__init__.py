"""CUBE benchmarks (PyPI `cube-standard`), audited in CUBE's own interpreter; MiniWoB++ (`miniwob-cube`) first.

CUBE needs Python >= 3.12 and verimut runs on 3.11, so a cube runs in its own environment
(`scripts/install-cube.sh` makes `./.venv-cube`) and is served over JSON lines by verimut/worker.py, like AppWorld.
`worker_side/miniwob_cube_bench.py` is MiniWoB++'s side of the adapter: the tasks with verimut's own reference runs,
the cube's Playwright tool in Debian's headless Chromium, verimut's own reader of the page as the end state, and
the reward exactly as `Task.evaluate()` returns it to a trainer as the verifier. `worker_side/miniwob_gym_bench.py`
(`miniwob-gym`) is the same tasks, runs and reader through MiniWoB++'s own gymnasium environment (Selenium,
Debian's chromedriver), with the return its `step()` gives a trainer as the verifier.
The interpreter is the `cube_python` option (`--option cube_python=PATH`), else $VERIMUT_CUBE_PYTHON, else
`./.venv-cube/bin/python` under the current directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from verimut.adapters.remote import Remote, interpreter
from verimut.core.errors import AuditError

PYTHON_ENV = "VERIMUT_CUBE_PYTHON"
DEFAULT_PYTHON = Path(".venv-cube") / "bin" / "python"  # relative: under the current directory
WORKER_SIDE = Path(__file__).resolve().parent / "worker_side"


def python(given: str | os.PathLike[str] | None = None) -> Path:
    """CUBE's interpreter: `given` (the `cube_python` option), $VERIMUT_CUBE_PYTHON, or the default."""
    return interpreter(given, PYTHON_ENV, DEFAULT_PYTHON, "CUBE", "install-cube.sh", "cube_python")


PROTOCOLS = ("once", "per-step", "both")


def create_miniwob(version: str | None = None, *, cube_python: str | None = None, protocols: str = "once") -> Remote:
    """MiniWoB++ through its cube. `version` is not chosen: the installed miniwob-cube is the one audited.
    `protocols` (`--option protocols=both`): the cube's validation protocols audited, "once" (Task.evaluate()
    after the run: tasks `<task>/<seed>`), "per-step" (after every step, as the cube's Task.step does, the episode
    ending when the task is done: tasks `<task>/<seed>/per-step`), or both."""
    if version is not None:
        raise AuditError(f"miniwob: --version {version!r} cannot be chosen; the installed miniwob-cube is audited")
    if protocols not in PROTOCOLS:
        raise AuditError(f"miniwob: protocols={protocols!r} is not one of {', '.join(PROTOCOLS)}")
    env = {"VERIMUT_MINIWOB_PROTOCOLS": protocols}
    return Remote(python(cube_python), "miniwob_cube_bench:MiniWobCube", cwd=WORKER_SIDE, env=env)


def create_miniwob_gym(version: str | None = None, *, cube_python: str | None = None) -> Remote:
    """MiniWoB++ through its own gymnasium environment (`miniwob`, Selenium and Debian's chromedriver), in CUBE's
    interpreter, which holds it: the cube's tasks, reference runs and actions, the reward a trainer's `step()` returns
    under the environment's default reward processor. `version` is not chosen: the installed miniwob is audited."""
    if version is not None:
        raise AuditError(f"miniwob-gym: --version {version!r} cannot be chosen; the installed miniwob is audited")
    return Remote(python(cube_python), "miniwob_gym_bench:MiniWobGym", cwd=WORKER_SIDE)
