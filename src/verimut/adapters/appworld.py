"""AppWorld (PyPI `appworld==0.1.3.post1`), audited in its own interpreter (work in progress).

AppWorld pins pydantic 1, so it runs in `.venv-appworld` (scripts/install-appworld.sh) and is
served over JSON lines by verimut/worker.py; `appworld_world.py` is its side of the adapter.
The data root is $APPWORLD_ROOT (AppWorld's own data, from `appworld download data`), or else
the generated synthetic suite: a small world and tasks in AppWorld's own format, made with the
real engine, labelled as synthetic everywhere (it is not AppWorld's own tasks).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from verimut.adapters.remote import Remote
from verimut.errors import AuditError

REPO = Path(__file__).resolve().parents[3]
PYTHON = REPO / ".venv-appworld" / "bin" / "python"
GENERATOR = REPO / "research" / "appworld" / "gen.py"
SYNTHETIC = REPO / ".verimut-cache" / "appworld-synthetic"


def _synthetic_root() -> Path:
    """Generate the synthetic suite once (deterministic), in its own process as AppWorld needs."""
    if not (SYNTHETIC / "data" / "datasets" / "synthetic.txt").exists():
        done = subprocess.run(
            [str(PYTHON), str(GENERATOR), str(SYNTHETIC)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise AuditError(f"generating the synthetic AppWorld suite failed: {done.stderr.strip().splitlines()[-1:]}")
    return SYNTHETIC


def create(version: str | None = None) -> Remote:
    if not PYTHON.exists():
        raise AuditError("AppWorld's environment is missing: run `bash scripts/install-appworld.sh` first")
    root = Path(os.environ["APPWORLD_ROOT"]) if os.environ.get("APPWORLD_ROOT") else _synthetic_root()
    env = {"APPWORLD_ROOT": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    return Remote(PYTHON, "appworld_world:AppWorldBench", cwd=Path(__file__).resolve().parent / "worker_side", env=env)
