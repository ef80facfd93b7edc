"""The scaling benchmark's generator (bench/scalebench.py): the same seed, the same benchmark."""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # `bench` is found from the repository root, as on the command line
scalebench = importlib.import_module("bench.scalebench")


def test_the_generator_is_deterministic_for_a_seed():
    a, b = scalebench.create(tasks="40", records="60", seed="3"), scalebench.create(tasks="40", records="60", seed="3")
    assert a.start == b.start and a.specs == b.specs and a.tasks() == b.tasks()
    other = scalebench.create(tasks="40", records="60", seed="4")
    assert other.start != a.start and other.specs != a.specs
    # Task k does not depend on how many tasks there are.
    more = scalebench.create(tasks="80", records="60", seed="3")
    assert all(more.specs[t] == a.specs[t] for t in a.tasks())
    assert a.tasks()[:2] == ["scale/task_00000", "scale/task_00001"]
    assert {s.kind for s in a.specs.values()} == {"status", "note", "pay", "lookup"}
    assert {s.style for s in a.specs.values()} == {"exact", "own", "loose"}


def test_reference_runs_pass_and_verifiers_cost_their_cpu():
    bench = scalebench.create(tasks="30", records="60", verify_ms="2")
    for task in bench.tasks():
        episode = bench.reset(task)
        run = bench.reference(task, episode)
        fork = bench.fork(episode)
        for action in run.actions:
            assert bench.execute(episode, action).error is None
        assert bench.snapshot(fork) == bench.snapshot(bench.reset(task))  # the fork is independent
        began = time.thread_time()
        assert bench.verify(episode, run).passed, task
        assert time.thread_time() - began >= 0.002
