from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from verimut.core.benchmark import Adapter

ROOT = Path(__file__).resolve().parent.parent

# No per-example deadline: on two shared cores, with a second worker and benchmark subprocesses beside it, a
# property test's example can take longer than Hypothesis's default 200 ms, which says nothing about the property.
settings.register_profile("verimut", deadline=None)
settings.load_profile("verimut")


@pytest.fixture(scope="session")
def agentdojo() -> Adapter:
    pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")
    from verimut import adapters
    from verimut.adapters.agentdojo import AgentDojo

    return adapters.resolve(AgentDojo("v1.2"))


def verimut(*args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run the real command line, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "verimut.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def wait_for_rows(ledger: Path, n: int, timeout: float = 600) -> None:
    """Wait until a run in the background has written `n` lines to `ledger` (0: created it); fail after `timeout` s.

    Generous: on a loaded machine building a suite's manifest alone can take minutes, and a test that went on
    without the rows would fail later with a misleading message.
    """
    deadline = time.time() + timeout
    while not ledger.exists() or ledger.read_text().count("\n") < n:
        if time.time() > deadline:
            pytest.fail(f"{ledger} did not reach {n} rows in {timeout:.0f} s")
        time.sleep(0.01)


# One run of each banking arm per session, shared by every test that only reads its output (each used to run
# its own: six audits and four censuses of the same suite). A test that changes a directory copies it first.


def once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The directory `make` fills, made once per test run: under pytest-xdist, once for all its workers."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        out = tmp_path_factory.mktemp("shared") / name
        make(out)
        return out
    shared = tmp_path_factory.getbasetemp().parent / "shared"  # the workers' base temps share this run's parent
    shared.mkdir(exist_ok=True)
    out, done = shared / name, shared / f"{name}.done"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():  # a worker whose make failed left none: the next one tries again, and fails alike
            shutil.rmtree(out, ignore_errors=True)
            make(out)
            done.touch()
    return out


def _audit_banking(out: Path) -> None:
    result = verimut("audit", "agentdojo", "--suite", "banking", "--out", str(out), "--quiet")
    assert result.returncode == 1, result.stderr  # banking has confirmed false accepts
    assert "report.html" in result.stdout


@pytest.fixture(scope="session")
def banking_audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`verimut audit agentdojo --suite banking`: the fault arm with the default executor."""
    pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")
    return once(tmp_path_factory, "banking", _audit_banking)


def agentdojo_digest() -> str:
    import agentdojo

    h = hashlib.sha256()
    for f in sorted(Path(agentdojo.__file__).parent.rglob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="session")
def banking_repaired(banking_audit: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the banking audit, then `verimut repair` on it."""

    def repair(out: Path) -> None:
        shutil.copytree(banking_audit, out)
        before = agentdojo_digest()
        result = verimut("repair", str(out))
        assert result.returncode == 0, result.stderr
        assert agentdojo_digest() == before  # the installed benchmark is never edited

    return once(tmp_path_factory, "banking-repaired", repair)


def _swap_banking(out: Path) -> None:
    result = verimut("swap", "agentdojo", "--suite", "banking", "--out", str(out), "-q")
    assert result.returncode == 1, result.stderr  # banking has acceptances with the effect absent


@pytest.fixture(scope="session")
def banking_swap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`verimut swap agentdojo --suite banking`: the intent-swap census."""
    pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")
    return once(tmp_path_factory, "banking-swap", _swap_banking)


# Under pytest-xdist (scripts/test.sh runs `-n 2 --dist loadfile`) each module runs on one worker, so that its
# module-scoped fixtures (WorkArena's audit, AppWorld's) run once. The longest modules go first, so that no worker
# is left alone with one of them at the end.
FIRST = ("tests/benchmarks/workarena/", "tests/benchmarks/appworld/", "tests/executors/test_executor.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # xdist schedules what its workers collected, in their order
        items.sort(key=lambda item: next((i for i, p in enumerate(FIRST) if item.nodeid.startswith(p)), len(FIRST)))


# Four systems on two splits: the leaderboard of tests/unit/test_rank.py (its comment works the
# intervals out by hand) and tests/cli/test_rank_budget.py.
SCORES = """system,split,score,notes
A,test_normal,0.90,best
B,test_normal,0.70,
C,test_normal,0.45,
D,test_normal,0.20,
A,test_challenge,0.50,
B,test_challenge,0.40,
C,test_challenge,0.30,
D,test_challenge,0.10,
"""


@pytest.fixture
def scores(tmp_path: Path) -> Path:
    path = tmp_path / "scores.csv"
    path.write_text(SCORES)
    return path


@pytest.fixture(scope="module")
def stand_in():
    """A WorkArena test module's own ServiceNow stand-in (verimut's offline stand-in, not ServiceNow)."""
    from verimut.adapters.workarena import servicenow_standin

    server = servicenow_standin.StandIn().start()
    yield server
    server.stop()
