"""Chaos (slow: scripts/test-slow.sh): a real AgentDojo audit SIGKILLed at 20 random moments, resumed each
time; after each resume every cell is recorded exactly once, with the row an uninterrupted run records."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, verimut

pytestmark = pytest.mark.slow
ARGS = ("audit", "agentdojo", "--suite", "banking", "-q", "--workers", "2")


def rows(out: Path) -> list[dict]:
    """Every whole ledger line (a torn last line is left for the next resume to move aside), `seconds` dropped."""
    path = out / "cells.jsonl"
    if not path.exists():
        return []
    data = path.read_bytes()
    whole = data[: data.rfind(b"\n") + 1]
    return [{k: v for k, v in json.loads(line).items() if k != "seconds"} for line in whole.splitlines()]


def test_an_audit_killed_at_random_moments_resumes_to_the_uninterrupted_result(tmp_path):
    clean = tmp_path / "clean"
    done = verimut(*ARGS, "--out", str(clean))
    assert done.returncode == 1, done.stderr
    expected = {r["cell_id"]: r for r in rows(clean)}

    moments = random.Random(20261201).sample([x / 10 for x in range(3, 80)], 20)
    for n, moment in enumerate(moments, 1):
        out = tmp_path / f"chaos-{n}"
        proc = subprocess.Popen([sys.executable, "-m", "verimut.cli", *ARGS, "--out", str(out)], cwd=ROOT)
        time.sleep(moment)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        resumed = verimut(*ARGS, "--out", str(out))
        assert resumed.returncode == 1, f"killed at {moment} s: {resumed.stderr}"
        got = rows(out)
        ids = [r["cell_id"] for r in got]
        assert len(ids) == len(set(ids)), f"killed at {moment} s: a cell recorded twice"
        assert {r["cell_id"]: r for r in got} == expected, f"killed at {moment} s"
