"""WebArena-Verified (PyPI `webarena-verified==1.2.3`), its evaluators audited offline in their own interpreter.

The package pins pydantic 2.12.0, so it runs in its own environment (scripts/install-webarena-verified.sh makes
`./.venv-webarena`) and is served over JSON lines by verimut/adapters/worker.py; `worker_side/` is its side of
the adapter. The interpreter is the `webarena_python` option, else $VERIMUT_WEBARENA_PYTHON, else
`./.venv-webarena/bin/python` under the current directory. `--option subset=hard` audits the package's hard
subset (its `webarena-verified-hard.json`); the default is all 812 tasks.

The reference runs are verimut's own, synthesized from each task's expected values (worker_side/
webarena_evidence.py): no GitLab, shopping, reddit, map or wikipedia site runs, so the audit tests the evaluators
on evidence, not what a site would have done with it.
"""

from __future__ import annotations

from pathlib import Path

from verimut.adapters.remote import Remote, interpreter
from verimut.core.errors import AuditError

PYTHON_ENV = "VERIMUT_WEBARENA_PYTHON"
DEFAULT_PYTHON = Path(".venv-webarena") / "bin" / "python"  # relative: under the current directory
WORKER_SIDE = Path(__file__).resolve().parent / "worker_side"
SUBSETS = ("all", "hard")


def python(given: str | None = None) -> Path:
    """WebArena-Verified's interpreter: `given` (the `webarena_python` option), $VERIMUT_WEBARENA_PYTHON, or the default."""
    return interpreter(
        given, PYTHON_ENV, DEFAULT_PYTHON, "WebArena-Verified", "install-webarena-verified.sh", "webarena_python"
    )


def create(version: str | None = None, *, subset: str = "all", webarena_python: str | None = None) -> Remote:
    if subset not in SUBSETS:
        raise AuditError(f"unknown WebArena-Verified subset {subset!r} (known: {', '.join(SUBSETS)})")
    env = {"PYTHONDONTWRITEBYTECODE": "1", "VERIMUT_WEBARENA_SUBSET": subset}
    return Remote(python(webarena_python), "webarena_bench:WebArenaVerifiedBench", cwd=WORKER_SIDE, env=env)
