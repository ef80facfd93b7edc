"""Chaos (slow: scripts/test-slow.sh): a real AgentDojo audit SIGKILLed at 20 random moments, resumed each
time; after each resume every cell is recorded exactly once, with the row an uninterrupted run records.
And stopped by SIGINT or SIGTERM, to its pid or its whole group, at 40 random moments: each stop is one line and
exit 130 or 143 within seconds, leaves no process behind and the directory unlocked, and the resume is as exact.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_signals import LINE, finish, session, start

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


def test_an_audit_stopped_by_a_signal_at_random_moments_ends_cleanly_and_resumes_to_the_uninterrupted_result(tmp_path):
    clean = tmp_path / "clean"
    done = verimut(*ARGS, "--out", str(clean))
    assert done.returncode == 1, done.stderr
    expected = {r["cell_id"]: r for r in rows(clean)}

    rng = random.Random(20261202)
    stopped = 0
    for n in range(1, 41):
        sig, group, moment = rng.choice([signal.SIGINT, signal.SIGTERM]), rng.random() < 0.5, rng.uniform(0, 3.5)
        what = f"{signal.Signals(sig).name} to the {'group' if group else 'pid'} {moment:.2f} s after the lock"
        out = tmp_path / f"stopped-{n}"
        proc = start(*ARGS, "--out", str(out))
        # Counted from the output directory's making (under its lock, in main()): before main() runs, the
        # interpreter is still importing verimut, and a Ctrl-C there is Python's own (a traceback, exit -2).
        while not out.exists() and proc.poll() is None:
            time.sleep(0.005)
        time.sleep(moment)
        if proc.poll() is None and group:
            os.killpg(proc.pid, sig)
        elif proc.poll() is None:
            proc.send_signal(sig)
        sent = time.monotonic()
        err = finish(proc, within=30)
        if proc.returncode != 1:  # 1: it had finished (its false accepts) before the signal came
            assert (proc.returncode, err.strip()) == (128 + sig, LINE), what
            assert time.monotonic() - sent < 10, what
            stopped += 1
        else:
            assert err.strip() == "", what
        assert not session(proc.pid), f"{what}: a process of the run outlived it"
        resumed = verimut(*ARGS, "--out", str(out))  # the directory's lock is free
        assert resumed.returncode == 1, f"{what}: {resumed.stderr}"
        got = rows(out)
        ids = [r["cell_id"] for r in got]
        assert len(ids) == len(set(ids)), f"{what}: a cell recorded twice"
        assert {r["cell_id"]: r for r in got} == expected, what
    assert stopped >= 10, f"only {stopped} of 40 runs were still going when their signal came"
