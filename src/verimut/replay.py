"""Replay a run from a clean start: the one place verimut drives a benchmark."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
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


class _Checkpoints:
    """One task's reference run, replayed once: the episode after each of its first k actions."""

    def __init__(self, bench: Any, task: str, reference: Run) -> None:
        self.actions = reference.actions
        episode = bench.reset(task)
        self.start = bench.snapshot(episode)
        self.episodes = [bench.fork(episode)]
        self.steps: list[Step] = []
        self.ends: dict[int, Any] = {}  # k -> snapshot after k actions, taken when first asked for
        for action in reference.actions:
            step = bench.execute(episode, action)
            if step.error is not None:
                break  # an action that raised may have half-changed the state: no checkpoint after it
            self.steps.append(step)
            self.episodes.append(bench.fork(episode))

    def shared(self, run: Run) -> int:
        """How many leading actions `run` shares with the reference (and has a checkpoint for)."""
        k = 0
        for a, b in zip(run.actions, self.actions[: len(self.episodes) - 1]):
            if a != b:
                break
            k += 1
        return k


class Replayer:
    """Replays runs of the tasks of one audit, reusing work where the adapter can fork.

    With an adapter that forks (`Forks`), each task's reference run is replayed once and the
    episode kept after each of its actions; a run that shares its first k actions with the
    reference starts from a fork of the checkpoint after k, instead of from `reset`. Every
    replay gets its own fork, so a verifier that changes its episode changes nobody else's.
    Checkpoints are kept for the `keep` tasks used last (work arrives grouped by task).
    """

    def __init__(self, bench: Benchmark, references: Mapping[str, Run], keep: int = 4) -> None:
        self.bench = bench
        self.references = references
        self.keep = keep
        self.forks = callable(getattr(bench, "fork", None))
        self._tasks: OrderedDict[str, _Checkpoints] = OrderedDict()

    def _checkpoints(self, task: str) -> _Checkpoints:
        if task in self._tasks:
            self._tasks.move_to_end(task)
        else:
            self._tasks[task] = _Checkpoints(self.bench, task, self.references[task])
            while len(self._tasks) > self.keep:
                self._tasks.popitem(last=False)
        return self._tasks[task]

    def replay(self, task: str, run: Run) -> Replay:
        if not self.forks:
            return replay(self.bench, task, run)
        cp = self._checkpoints(task)
        k = cp.shared(run)
        episode = self.bench.fork(cp.episodes[k])  # type: ignore[attr-defined]
        steps = list(cp.steps[:k])
        for i in range(k, len(run.actions)):
            step = self.bench.execute(episode, run.actions[i])
            steps.append(step)
            if step.error is not None:
                return Replay(episode, cp.start, self.bench.snapshot(episode), steps, i)
        if len(run.actions) == k:  # ends on a checkpoint: its snapshot serves every run that does
            if k not in cp.ends:
                cp.ends[k] = self.bench.snapshot(cp.episodes[k])
            return Replay(episode, cp.start, cp.ends[k], steps)
        return Replay(episode, cp.start, self.bench.snapshot(episode), steps)
