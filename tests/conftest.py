from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from verimut import adapters
from verimut.adapters.agentdojo import AgentDojo

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def agentdojo() -> adapters.Adapter:
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
