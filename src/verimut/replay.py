"""Replay a run from a clean start: the one place verimut drives a benchmark."""

from __future__ import annotations

from typing import Any

import msgspec

from verimut.benchmark import Benchmark
from verimut.run import Run, Step


class Replay(msgspec.Struct):
    episode: Any
    start: Any  # snapshot before the first action
    end: Any  # snapshot after the last action delivered, before any verifier runs
    steps: list[Step]
    failed_at: int | None = None  # index of the action that raised, if one did


def replay(bench: Benchmark, task: str, run: Run) -> Replay:
    episode = bench.reset(task)
    start = bench.snapshot(episode)
    steps: list[Step] = []
    for i, action in enumerate(run.actions):
        step = bench.execute(episode, action)
        steps.append(step)
        if step.error is not None:
            return Replay(episode, start, bench.snapshot(episode), steps, i)
    return Replay(episode, start, bench.snapshot(episode), steps)
