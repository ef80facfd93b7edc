"""CUBE benchmarks (PyPI `cube-standard`), audited in CUBE's own interpreter; MiniWoB++ (`miniwob-cube`) first.

CUBE needs Python >= 3.12 and verimut runs on 3.11, so a cube runs in its own environment
(`scripts/install-cube.sh` makes `./.venv-cube`) and is served over JSON lines by verimut/worker.py, like AppWorld.
`worker_side/miniwob_cube_bench.py` is MiniWoB++'s side of the adapter: the tasks with verimut's own reference runs,
the cube's Playwright tool in Debian's headless Chromium, verimut's own reader of the page as the end state, and
the reward exactly as `Task.evaluate()` returns it to a trainer as the verifier.
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


def create_miniwob(version: str | None = None, *, cube_python: str | None = None) -> Remote:
    """MiniWoB++ through its cube. `version` is not chosen: the installed miniwob-cube is the one audited."""
    if version is not None:
        raise AuditError(f"miniwob: --version {version!r} cannot be chosen; the installed miniwob-cube is audited")
    return Remote(python(cube_python), "miniwob_cube_bench:MiniWobCube", cwd=WORKER_SIDE)
