"""The executors' map: the manifest's per-task work on every core, with the same manifest as one process builds.

`forked_map` keeps the items' order whatever finishes first, raises what the function raised at its item, turns
a dead process into a one-line error, and leaves no process behind; the manifest it builds (both arms) has the
same content hash as the serial build, and an adapter that takes one cell at a time builds in this process.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time

import pytest

from verimut import adapters
from verimut.core.errors import AuditError
from verimut.engine import executor, pipeline
from verimut.engine import manifest as manifest_mod
from verimut.engine.executor import forked_map


def _slow_first(n: int) -> tuple[int, int]:
    time.sleep(0.2 if n == 0 else 0.0)  # the first item finishes last
    return n * n, os.getpid()


def test_results_come_in_the_items_order_from_other_processes():
    got = list(forked_map(_slow_first, list(range(12)), 2))
    assert [r for r, _ in got] == [n * n for n in range(12)]
    pids = {p for _, p in got}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert mp.active_children() == []  # the processes were joined


def test_one_worker_or_one_item_runs_here():
    assert {p for _, p in forked_map(_slow_first, [0, 1, 2], 1)} == {os.getpid()}
    assert {p for _, p in forked_map(_slow_first, [3], 2)} == {os.getpid()}


def test_a_closure_over_this_processs_memory_is_inherited_not_pickled():
    held = {"a": lambda: 1}  # a lambda in the closure: pickling the function would fail
    assert list(forked_map(lambda k: (k, held["a"]()), ["x", "y", "z"], 2)) == [("x", 1), ("y", 1), ("z", 1)]


def _raise_on_three(n: int) -> int:
    if n == 3:
        raise AuditError(f"item {n} is bad")
    return n


def test_an_exception_is_raised_at_its_item_after_the_results_before_it():
    got: list[int] = []
    with pytest.raises(AuditError, match="item 3 is bad"):
        got.extend(forked_map(_raise_on_three, list(range(8)), 2))  # appends each result as it comes
    assert got == [0, 1, 2]
    assert mp.active_children() == []


def _die_on_two(n: int) -> int:
    if n == 2:
        os._exit(9)  # as a benchmark that crashes its process would
    return n


def test_a_process_that_dies_is_a_one_line_error():
    with pytest.raises(AuditError, match="a process forked to build the manifest or draw the report died") as e:
        list(forked_map(_die_on_two, list(range(6)), 2))
    assert "\n" not in str(e.value)
    assert mp.active_children() == []


@pytest.mark.parametrize("arm", ["fault", "swap"])
def test_the_pools_manifest_is_the_serial_one(arm, monkeypatch):
    from conftest import ROOT

    monkeypatch.chdir(ROOT)
    bench = adapters.load("bench.scalebench:create", None, {"tasks": "24", "records": "30", "verify_ms": "0"})
    tasks = pipeline.select_tasks(bench.tasks())
    families = pipeline.select_families() if arm == "fault" else ()
    serial = manifest_mod.build(bench, tasks, families, arm=arm)
    ticks: list[str] = []
    each = pipeline.OnCores(executor.make("pool", 2))
    forked = manifest_mod.build(bench, tasks, families, ticks.append, arm=arm, each=each)
    assert forked.content_hash == serial.content_hash
    assert forked == serial
    assert ticks == tasks + tasks  # progress: once per task per pass, in order


def test_an_adapter_that_takes_one_cell_at_a_time_builds_here():
    each = pipeline.OnCores(executor.make("pool", 2), 1)  # WorkArena's concurrency: one live instance
    assert {p for _, p in each(_slow_first, [0, 1, 2])} == {os.getpid()}
    in_process = pipeline.OnCores(executor.make("inprocess"))
    assert {p for _, p in in_process(_slow_first, [0, 1, 2])} == {os.getpid()}


def test_ray_maps_on_this_machines_cores_without_starting_ray():
    pytest.importorskip("ray", reason="Ray is not installed: scripts/install.sh installs it")
    import ray

    runner = executor.make("ray", workers=64)
    got = list(runner.map(_slow_first, list(range(6))))
    assert [r for r, _ in got] == [n * n for n in range(6)]
    assert len({p for _, p in got} - {os.getpid()}) <= (os.cpu_count() or 1)
    assert not ray.is_initialized()
