"""Executors: the same ledger content from each (Ray included, on a real local Ray), and
workers that survive hangs and deaths, with the rest of a cut cell's group still scored."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ROOT, verimut, wait_for_rows


def ledger(out: Path) -> dict[str, dict]:
    """Every row by cell id, without `seconds` (the one field that measures, not decides)."""
    rows = map(json.loads, (out / "cells.jsonl").read_text().splitlines())
    return {r["cell_id"]: {k: v for k, v in r.items() if k != "seconds"} for r in rows}


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _session_members(sid: int) -> list[int]:
    """Every live process of session `sid`: what `ray start` and its daemons left running."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":  # fields[3]: the session id; Z: a zombie, already gone
            found.append(int(stat.parent.name))
    return found


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    """A real Ray head on this machine, started the way a user starts one, for --address.

    It is the test's own: its own temp dir and ports, and its own session, so that teardown stops exactly
    the processes it started (never `ray stop`, which stops every Ray on the machine: another test run's too).
    """
    # Short: Ray puts unix sockets under it, and a socket path may not exceed 107 bytes.
    temp = Path(tempfile.mkdtemp(prefix="vmray-"))
    gcs, node_manager, object_manager, agent, agent_grpc, metrics, runtime_env = _free_ports(7)
    # Ray 2.60's `ray start` turns on token authentication unless told not to; a local test cluster needs none.
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    start = [
        # `ray start` run by this interpreter (the venv's `ray` script may name another one on its first line).
        sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block", f"--temp-dir={temp}",
        f"--port={gcs}", f"--node-manager-port={node_manager}",
        f"--object-manager-port={object_manager}", f"--dashboard-agent-listen-port={agent}",
        f"--dashboard-agent-grpc-port={agent_grpc}", f"--metrics-export-port={metrics}",
        f"--runtime-env-agent-port={runtime_env}", "--num-cpus=2", "--include-dashboard=false",
    ]  # fmt: skip
    log = (tmp_path_factory.mktemp("ray") / "ray-start.log").open("w")
    head = subprocess.Popen(start, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while True:  # up once its GCS answers; --block keeps `ray start` in the foreground
            assert head.poll() is None, Path(log.name).read_text()
            assert time.monotonic() < deadline, Path(log.name).read_text()
            try:
                socket.create_connection(("127.0.0.1", gcs), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        yield f"127.0.0.1:{gcs}"
    finally:
        # `ray start --block` stops the processes it started on SIGTERM; anything left in its session is ours too.
        head.terminate()
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + 30
        while (left := _session_members(head.pid)) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL if time.monotonic() > deadline - 20 else signal.SIGTERM)
            time.sleep(0.5)
        if head.poll() is None:
            head.kill()
            head.wait()
        log.close()
        shutil.rmtree(temp, ignore_errors=True)
        assert not _session_members(head.pid), "a Ray process of this test outlived its teardown"


@pytest.mark.parametrize(
    "arm, args",
    [
        ("audit", ["--suite", "slack"]),
        ("swap", ["--suite", "banking"]),
    ],
)
def test_every_executor_records_the_same_ledger(arm, args, tmp_path, request):
    runs = {}
    for executor in ("pool", "inprocess", "ray"):
        out = tmp_path / executor
        extra = ["--workers", "2"] if executor != "inprocess" else []
        if executor == "ray" and arm == "swap":
            extra += ["--address", request.getfixturevalue("ray_cluster")]
        result = verimut(arm, "agentdojo", *args, "--out", str(out), "-q", "--executor", executor, *extra)
        assert result.returncode == 1, result.stderr
        runs[executor] = ledger(out)
    assert runs["pool"] == runs["inprocess"] == runs["ray"]
    assert len(runs["pool"]) > 100


@pytest.mark.parametrize("executor", ["pool", "ray"])
def test_a_hanging_cell_is_cut_and_a_dead_worker_replaced(executor, tmp_path):
    out = tmp_path / executor
    args = ["--out", str(out), "-q", "--timeout", "10", "--workers", "2", "--executor", executor]
    result = verimut("audit", "tests.troublebench:benchmark", *args)
    assert result.returncode == 1, result.stderr  # t/ok's duplicate is a false accept
    rows = ledger(out)
    assert rows["t/hang:control"]["outcome"] == "error" and "timed out after 10 s" in rows["t/hang:control"]["reason"]
    assert rows["t/die:control"]["outcome"] == "error" and "died" in rows["t/die:control"]["reason"]
    assert rows["t/ok:control"]["outcome"] == "control_pass"
    assert rows["t/ok:extra"]["outcome"] == "false_accept"
    assert rows["t/hang:extra"]["unscorable"] is True
    # omit:at-0 hangs in the middle of t/midhang's group; the cells before and after it are scored all the same
    assert rows["t/midhang:omit:at-0"]["outcome"] == "error"
    assert rows["t/midhang:claim-only"]["outcome"] == "rejected"
    assert rows["t/midhang:omit"]["outcome"] == "false_accept"
    assert rows["t/midhang:extra"]["outcome"] == "false_accept"
    # Every death is recorded with the worker's exit code, the second as well as the first.
    if executor == "pool":
        second = "t/dielate:extra-oos:add_item@items"  # extra-ni's run is extra's: the second death is here
        for cell in ("t/die:control", "t/dielate:extra", second):
            assert rows[cell]["outcome"] == "error", cell
            assert "exit code None" not in rows[cell]["reason"]
        assert "(exit code 4)" in rows[second]["reason"]
        assert rows["t/dielate:extra-ni"]["outcome"] == "same_run"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scored"] == summary["cells"]


def test_bad_executor_options_exit_2():
    for args, message in [
        (["--executor", "threads"], "unknown executor 'threads'"),
        (["--workers", "0"], "--workers must be at least 1"),
        (["--timeout", "0"], "--timeout must be positive"),
        (["--timeout", "nan"], "--timeout must be positive and finite (seconds), not nan"),
        (["--timeout", "inf"], "--timeout must be positive and finite (seconds), not inf"),
        (["--address", "127.0.0.1:1"], "--address is for --executor ray"),
        (["--executor", "ray", "--address", "127.0.0.1:1"], "cannot connect to the Ray cluster at 127.0.0.1:1"),
    ]:
        result = verimut("audit", "agentdojo", *args)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_ray_missing_is_one_line_and_exit_2():
    # As in an install without the 'ray' extra: importing ray fails.
    code = (
        "import sys; sys.modules['ray'] = None; "
        "sys.argv = ['verimut', 'audit', 'agentdojo', '--executor', 'ray']; "
        "from verimut.cli import main; main()"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "verimut: error: --executor ray needs Ray: install verimut with the 'ray' extra (pip install 'verimut[ray]')"
    )


def test_pool_workers_exit_when_the_run_is_killed(tmp_path):
    out = tmp_path / "killed"
    args = ["audit", "agentdojo", "--suite", "workspace", "--out", str(out), "-q", "--workers", "2"]
    proc = subprocess.Popen([sys.executable, "-m", "verimut.cli", *args], cwd=ROOT)
    ledger = out / "cells.jsonl"
    wait_for_rows(ledger, 5)
    children = _children(proc.pid)
    assert len(children) >= 2  # the pool's workers
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not _survivors(children, within=15)


def test_no_worker_outlives_a_killed_run_even_inside_a_hung_verifier(tmp_path):
    # t/hang's cells sleep for an hour inside the benchmark, in the workers: they never read their pipe again.
    out = tmp_path / "hung"
    args = ["audit", "tests.troublebench:benchmark", "--out", str(out), "-q", "--workers", "2", "--timeout", "600"]
    proc = subprocess.Popen([sys.executable, "-m", "verimut.cli", *args], cwd=ROOT)
    ledger = out / "cells.jsonl"
    # t/ok's and t/die's controls finish (t/die's by its worker's death); t/hang's stays in flight.
    wait_for_rows(ledger, 2)
    time.sleep(1.0)
    workers = _descendants(proc.pid)
    assert workers, "the pool's workers should be running"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not _survivors(workers, within=5)


def _survivors(pids: list[int], within: float) -> list[int]:
    """The processes among `pids` still alive after waiting up to `within` seconds for them to go."""
    deadline = time.time() + within
    while time.time() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    return [pid for pid in pids if _alive(pid)]


def _descendants(pid: int) -> list[int]:
    found = _children(pid)
    for child in list(found):
        found += _descendants(child)
    return found


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_a_local_ray_instance_leaves_the_environment_as_it_found_it():
    """ray.init sets RAY_AUTH_MODE=token in this process for good; a later connection to a cluster without
    authentication (this file's `ray_cluster`, from a process this one starts) then fails. verimut puts back the
    RAY_* variables it found when it shuts down the instance it started."""
    pytest.importorskip("ray", reason="Ray is not installed: scripts/install.sh installs the 'ray' extra")
    from verimut.engine import executor

    before = {k: v for k, v in os.environ.items() if k.startswith("RAY_")}
    run = executor.make("ray", workers=1)
    try:
        run._start()  # the local instance `run` starts before its first batch
        import ray

        assert ray.is_initialized()
    finally:
        run.close()
    assert {k: v for k, v in os.environ.items() if k.startswith("RAY_")} == before
