from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from verimut.adapters.agentdojo import AgentDojo

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def agentdojo() -> AgentDojo:
    pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")
    from verimut.adapters.agentdojo import AgentDojo

    return AgentDojo("v1.2")


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


# One run of each banking arm per session, shared by every test that only reads its output (each used to run
# its own: six audits and four censuses of the same suite). A test that changes a directory copies it first.


@pytest.fixture(scope="session")
def banking_audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`verimut audit agentdojo --suite banking`: the fault arm with the default executor."""
    pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")
    out = tmp_path_factory.mktemp("shared") / "banking"
    result = verimut("audit", "agentdojo", "--suite", "banking", "--out", str(out), "--quiet")
    assert result.returncode == 1, result.stderr  # banking has confirmed false accepts
    assert "report.html" in result.stdout
    return out


def agentdojo_digest() -> str:
    import agentdojo

    h = hashlib.sha256()
    for f in sorted(Path(agentdojo.__file__).parent.rglob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="session")
def banking_repaired(banking_audit: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the banking audit, then `verimut repair` on it."""
    out = tmp_path_factory.mktemp("shared") / "banking-repaired"
    shutil.copytree(banking_audit, out)
    before = agentdojo_digest()
    result = verimut("repair", str(out))
    assert result.returncode == 0, result.stderr
    assert agentdojo_digest() == before  # the installed benchmark is never edited
    return out


@pytest.fixture(scope="session")
def banking_swap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`verimut swap agentdojo --suite banking`: the intent-swap census."""
    pytest.importorskip("agentdojo", reason="AgentDojo is not installed: scripts/install.sh installs it")
    out = tmp_path_factory.mktemp("shared") / "banking-swap"
    result = verimut("swap", "agentdojo", "--suite", "banking", "--out", str(out), "-q")
    assert result.returncode == 1, result.stderr  # banking has acceptances with the effect absent
    return out
