"""A run's processes from start to end, through the real command line (issue 27, items 8 and 12).

SIGINT (Ctrl-C) and SIGTERM, to the process or to its whole group (a terminal sends Ctrl-C to the group), stop
an audit within seconds: exit 130 or 143, one line on stderr, no process of the run left, the directory's lock
released, and a resumed audit records what an uninterrupted one does. A verifier that leaks a non-daemon
thread costs nothing: the audit takes about as long as without the leak, records the same, and its process ends.
tests/cli/test_chaos.py interrupts a real AgentDojo audit at random moments (slow).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, verimut

BENCH = "tests.lifecycle_bench:benchmark"
LINE = "verimut: interrupted; scored cells are in the ledger, run again to resume"
SLEEP = "0.5"  # seconds per reference run and verifier call: the manifest's build takes 1 s, scoring 3 s


def rows(out: Path) -> dict[str, dict]:
    """The ledger's whole lines by cell id, `seconds` dropped (the one field that measures, not decides)."""
    path = out / "cells.jsonl"
    if not path.exists():
        return {}
    data = path.read_bytes()
    found = [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]
    assert len(found) == len({r["cell_id"] for r in found}), "a cell recorded twice"
    return {r["cell_id"]: {k: v for k, v in r.items() if k != "seconds"} for r in found}


def start(*args: str) -> subprocess.Popen[str]:
    """The command line in a session of its own (its pid is the session's and the group's id), as a user runs it."""
    return subprocess.Popen(
        [sys.executable, "-m", "verimut.cli", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def finish(proc: subprocess.Popen[str], within: float) -> str:
    """Its stderr once it ends; fail (and kill its group) if it runs on for `within` seconds."""
    try:
        return proc.communicate(timeout=within)[1]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"still running {within:g} s later")


def session(sid: int, within: float = 2.0) -> list[int]:
    """The processes of session `sid` still alive after waiting up to `within` seconds for them to go."""

    def members() -> list[int]:
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":  # fields[3]: the session; Z: a zombie, already gone
                found.append(int(stat.parent.name))
        return found

    deadline = time.monotonic() + within
    while (left := members()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def wait_until(proc: subprocess.Popen[str], ready, what: str, within: float = 60) -> None:
    deadline = time.monotonic() + within
    while not ready():
        assert proc.poll() is None, f"ended before {what}: {proc.communicate()[1]}"
        assert time.monotonic() < deadline, f"no {what} in {within:g} s"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("signals") / "clean"
    done = verimut("audit", BENCH, "-q", "--workers", "2", "--out", str(out))
    assert done.returncode == 1, done.stderr  # the to-do example's duplicate add is a confirmed false accept
    return rows(out)


@pytest.mark.parametrize(
    ("sig", "group", "phase"),
    [
        (signal.SIGINT, True, "manifest"),  # Ctrl-C in a terminal, while forked processes build the manifest
        (signal.SIGTERM, True, "manifest"),  # a service manager stopping the run's whole group
        (signal.SIGTERM, False, "scoring"),  # `kill PID` while the pool's workers are inside verifiers
        (signal.SIGINT, False, "scoring"),
    ],
    ids=["sigint-group-manifest", "sigterm-group-manifest", "sigterm-pid-scoring", "sigint-pid-scoring"],
)
def test_a_signal_stops_the_audit_in_seconds_with_one_line_and_a_resume_completes_it(
    sig, group, phase, uninterrupted, tmp_path, monkeypatch
):
    out = tmp_path / "out"
    monkeypatch.setenv("VERIMUT_TEST_SLEEP", SLEEP)
    proc = start("audit", BENCH, "-q", "--workers", "2", "--out", str(out))
    if phase == "manifest":  # the processes forked to build it are up, and it is not written yet
        wait_until(proc, lambda: len(children(proc.pid)) == 2 and not (out / "manifest.json").exists(), phase)
    else:  # the controls are recorded: the workers score the other cells
        wait_until(proc, lambda: len(rows(out)) >= 2, phase)
    sent = time.monotonic()
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    err = finish(proc, within=20)
    took = time.monotonic() - sent
    assert proc.returncode == 128 + sig, err  # 130 for SIGINT, 143 for SIGTERM
    assert err.strip() == LINE, err  # one line: no traceback, from this process or its children
    assert took < 10, f"{took:.1f} s from the signal to the exit"
    assert not session(proc.pid), "a process of the interrupted run outlived it"
    assert rows(out) != uninterrupted  # it was stopped before the end

    monkeypatch.setenv("VERIMUT_TEST_SLEEP", "0")
    resumed = verimut("audit", BENCH, "-q", "--workers", "2", "--out", str(out))  # the lock is free
    assert resumed.returncode == 1, resumed.stderr
    assert rows(out) == uninterrupted
    assert verimut("report", str(out)).returncode == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--workers", "2"],  # the manifest's per-task work in forked processes, then the pool's workers
        ["--workers", "2", "--task", "todo/add_milk"],  # one task: its manifest here, its cells in one worker
        ["--executor", "inprocess"],  # every leaked thread in this process
    ],
    ids=["pool", "pool-one-task", "inprocess"],
)
def test_a_verifier_that_leaks_a_thread_neither_hangs_nor_slows_the_audit(args, tmp_path):
    """tests.misbehave:leaks_thread starts a non-daemon thread that sleeps an hour in each verifier call. It used to
    hang the manifest's build and the exit, and every worker's end waited its 120 s for the thread (the run that
    takes 0.03 s to score took 360 s), so the test gives each audit 30 s."""
    times, recorded = {}, {}
    for bench in ("examples.todo_bench:benchmark", "tests.misbehave:leaks_thread"):
        out = tmp_path / bench.split(":")[1]
        began = time.monotonic()
        proc = start("audit", bench, "-q", "--out", str(out), *args)
        err = finish(proc, within=30)
        times[bench] = time.monotonic() - began
        assert proc.returncode == 1, err
        assert not session(proc.pid), "a process of the run outlived it (a leaked thread kept it up)"
        recorded[bench] = rows(out)
        [run] = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
        assert run["scoring_seconds"] < 5, run
    assert recorded["tests.misbehave:leaks_thread"] == recorded["examples.todo_bench:benchmark"]
    assert times["tests.misbehave:leaks_thread"] < times["examples.todo_bench:benchmark"] + 10, times
