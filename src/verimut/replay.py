"""Replay a run from a clean start: the one place verimut drives a benchmark."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import msgspec

from verimut.benchmark import Adapter, Benchmark
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


class _Checkpoint:
    """A task's reference run, replayed once: the episode after its last action, kept to fork."""

    def __init__(self, bench: Benchmark, task: str, reference: Run) -> None:
        self.run = reference
        done = replay(bench, task, reference)
        self.start, self.end, self.steps = done.start, done.end, done.steps
        self.episode = done.episode if done.failed_at is None else None  # a failed replay is not reused


class Replayer:
    """Replays runs of the tasks of one audit; a run replayed for many cells is replayed once.

    With an adapter that forks (`Forks`), each task's reference run is replayed once and its
    end kept: the swap census grades that one run with every verifier of the suite, each on
    its own fork of the end (so a verifier that changes its episode changes nobody else's),
    and all share one end snapshot. Other runs are replayed from `reset`. Starting edited
    runs from forks of shared prefixes was measured too (bench/bench_swap.py) and did not pay
    on AgentDojo, where a fork costs what a reset does: 1.02-1.05x slower. Checkpoints are
    kept for the `keep` tasks used last (work arrives grouped by run).
    """

    def __init__(self, bench: Adapter, references: Mapping[str, Run], keep: int = 4) -> None:
        self.bench = bench
        self.references = references
        self.keep = keep
        self._tasks: OrderedDict[str, _Checkpoint] = OrderedDict()

    def _checkpoint(self, task: str) -> _Checkpoint:
        if task in self._tasks:
            self._tasks.move_to_end(task)
        else:
            self._tasks[task] = _Checkpoint(self.bench, task, self.references[task])
            while len(self._tasks) > self.keep:
                self._tasks.popitem(last=False)
        return self._tasks[task]

    def reference_end(self, task: str) -> Any:
        """The end state of the task's reference run (replayed once per task while kept)."""
        return self._checkpoint(task).end

    def replay(self, task: str, run: Run) -> Replay:
        fork = self.bench.fork
        if fork is None or self.references.get(task) != run:
            return replay(self.bench, task, run)
        cp = self._checkpoint(task)
        if cp.episode is None:
            return replay(self.bench, task, run)
        episode = fork(cp.episode)
        return Replay(episode, cp.start, cp.end, list(cp.steps))
