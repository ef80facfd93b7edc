"""Replay a run from a clean start, keeping what many cells share (a task's reference end, to fork).

Every cell the scorer scores (and the repair regrades) is replayed here, and the manifest's builder replays
reference runs with `replay`. It is not the only code that drives a benchmark: the idempotence census
(grammar/census.py) and the out-of-scope trial (grammar/oos.py) execute actions themselves, the manifest's
builder resets tasks to read their reference runs and grade their clean starts, the scorer's observer runs the
suite's reads on forks (engine/scorer.py), and the declarations check patches forks (engine/declared.py).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from verimut.core.benchmark import Adapter, Benchmark
from verimut.core.run import Run, Step


class Replay(msgspec.Struct):
    episode: Any
    start: Any  # snapshot before the first action
    end: Any  # snapshot after the last action delivered, before any verifier runs
    steps: list[Step]
    failed_at: int | None = None  # index of the action that raised, if one did
    shared: bool = False  # the kept episode itself, graded in place (not a fork): see Replayer


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


REPLAY_TRIES = 3  # replays of a reference whose benchmark `replays_vary`, until one passes its verifier


def passes(bench: Adapter, episode: Any, run: Run) -> bool:
    """The verifier's verdict on a live episode, on a fork of it where there is one (so it is left as it was)."""
    copy = bench.fork(episode) if bench.fork is not None else episode
    try:
        return bench.verify(copy, run).passed
    finally:
        if bench.fork is not None and bench.close is not None:
            bench.close(copy)


def passing_replay(bench: Adapter, run: Run, again: Callable[[], Replay]) -> tuple[Replay, int]:
    """`again()`, called again while the replay it gives raised or its verifier fails, at most REPLAY_TRIES times,
    where the adapter's replays vary (`replays_vary`); else once. The last replay, and how many were made (the
    last one's verdict is the caller's to take)."""
    done, tries = again(), 1
    while (
        bench.replays_vary
        and tries < REPLAY_TRIES
        and (done.failed_at is not None or not passes(bench, done.episode, run))
    ):
        done, tries = again(), tries + 1
    return done, tries


class _Checkpoint:
    """A task's reference run, replayed once: the episode after its last action, kept to fork.

    With `prefixes`, also a fork of the episode after each earlier action (`at[k]`: after k
    actions), so a run that leaves the reference run after action k starts from there.

    Where the adapter's replays vary (`replays_vary`: a browser, whose click can slip), one replay may end
    elsewhere than the reference does, and every cell of the task would be compared with that wrong end (a
    run that did nothing judged "the same as the reference"). So its verifier is called on the end (on a fork,
    where there is one) and the reference replayed again until it passes, at most REPLAY_TRIES times;
    `passed` says whether one did (None: not checked, the adapter's replays do not vary).
    """

    def __init__(self, bench: Adapter, task: str, reference: Run, prefixes: bool = False) -> None:
        self.run = reference
        self.passed: bool | None = None
        for tries in range(1, REPLAY_TRIES + 1):
            self._replay(bench, task, reference, prefixes)
            if not bench.replays_vary:
                return
            self.passed = self.episode is not None and passes(bench, self.episode, self.run)
            if self.passed or tries == REPLAY_TRIES:
                return
            if bench.close is not None and self.episode is not None:
                for episode in (self.episode, *self.at.values()):
                    bench.close(episode)

    def _replay(self, bench: Adapter, task: str, reference: Run, prefixes: bool) -> None:
        self.at: dict[int, Any] = {}
        episode = bench.reset(task)
        self.start = bench.snapshot(episode)
        self.steps: list[Step] = []
        failed = False
        for k, action in enumerate(reference.actions):
            if prefixes and k and bench.fork is not None:
                self.at[k] = bench.fork(episode)
            step = bench.execute(episode, action)
            self.steps.append(step)
            if step.error is not None:
                failed = True
                break
        self.end = bench.snapshot(episode)
        self.episode = None if failed else episode  # a failed replay is not reused
        if failed:
            self.at.clear()


def shared_prefix(run: Run, reference: Run) -> int:
    """How many leading actions `run` shares with `reference`."""
    n = 0
    for a, b in zip(run.actions, reference.actions, strict=False):
        if a != b:
            break
        n += 1
    return n


class Replayer:
    """Replays runs of the tasks of one audit; a run replayed for many cells is replayed once.

    With an adapter that forks (`Forks`), each task's reference run is replayed once and its
    end kept. The swap census grades that one run with every verifier of the suite, each on
    its own fork of the end (so a verifier that changes its episode changes nobody else's),
    and all share one end snapshot. A run that *extends* the reference run (every reference
    action, in order, then more: an appended out-of-scope write, a repeated last write)
    starts from a fork of that end and executes only its extra actions: its start snapshot
    is the clean start's, its end a fresh snapshot after the extra actions. Other runs are
    replayed from `reset`, unless `prefixes` is set: then the reference replay also keeps a
    fork after each action, and a run that leaves the reference after action k starts from
    the fork at k. bench/bench_side_effects.py measures both on AgentDojo (docs/side-effects.md,
    "Cost"). Prefix forks stay off: each is made whether a cell uses it or not, a fork costs what
    a reset does there, and the gain measured (0.91-0.94x of the fault arm's scoring time on a
    loaded machine; bench/bench_swap.py once found 1.02-1.05x slower) is within the noise.
    Checkpoints are kept for the `keep` tasks used last (work arrives grouped by run).

    An adapter that cannot fork but `grades_in_place` (WorkArena: a browser session on one instance)
    holds one live episode, which the next reset ends: one checkpoint is kept, and a swap cell
    (`in_place=True`) gets the kept episode itself, marked `shared`; the scorer checks that its verifier
    left it as it was. Any other run is replayed afresh, after the kept episode is released.
    """

    def __init__(self, bench: Adapter, references: Mapping[str, Run], keep: int = 4, prefixes: bool = False) -> None:
        self.bench = bench
        self.references = references
        self.keep = keep
        self.prefixes = prefixes
        self._tasks: OrderedDict[str, _Checkpoint] = OrderedDict()
        self.in_place = bench.fork is None and bench.grades_in_place
        if self.in_place:
            self.keep = 1  # a reset ends the live episode before it

    def _checkpoint(self, task: str) -> _Checkpoint:
        if task in self._tasks:
            self._tasks.move_to_end(task)
        else:
            if self.in_place:
                self.release()
            self._tasks[task] = _Checkpoint(self.bench, task, self.references[task], self.prefixes)
            while len(self._tasks) > self.keep:
                self._close(self._tasks.popitem(last=False)[1])
        return self._tasks[task]

    def forget(self) -> None:
        """Drop every kept episode: after the benchmark's process died, they live in a dead worker."""
        self._tasks.clear()

    def release(self) -> None:
        """Close and drop every kept episode (the work is done, or a reset is about to end them)."""
        for cp in self._tasks.values():
            self._close(cp)
        self._tasks.clear()

    def _close(self, cp: _Checkpoint) -> None:
        close = self.bench.close
        if close is None or (self.bench.fork is None and not self.in_place):
            return  # an episode neither forked nor graded in place was never used after its replay
        for episode in (cp.episode, *cp.at.values()):
            if episode is not None:
                close(episode)

    def reference_end(self, task: str) -> Any:
        """The end state of the task's reference run (replayed once per task while kept)."""
        return self._checkpoint(task).end

    def reference_passed(self, task: str) -> bool:
        """False only where the adapter's replays vary and no replay of the task's reference passed its verifier
        in REPLAY_TRIES tries: there is no correct end to compare a cell with."""
        return self._checkpoint(task).passed is not False

    def reference_episode(self, task: str) -> Any | None:
        """The live episode at the end of the task's reference run, to fork (None: not kept, or it raised)."""
        return self._checkpoint(task).episode if self.bench.fork is not None else None

    def reference_steps(self, task: str) -> list[Step]:
        """What each action of the task's reference run returned (replayed once per task while kept)."""
        return self._checkpoint(task).steps

    def replay(self, task: str, run: Run, in_place: bool = False) -> Replay:
        """The run's replay; `in_place`: a swap cell, which the kept episode itself may serve (see above)."""
        fork = self.bench.fork
        reference = self.references.get(task)
        if fork is None or reference is None:
            if in_place and self.in_place and reference is not None and run.actions == reference.actions:
                cp = self._checkpoint(task)
                if cp.episode is not None:
                    return Replay(cp.episode, cp.start, cp.end, list(cp.steps), shared=True)
            if self.in_place:
                self.release()
            return replay(self.bench, task, run)
        k = shared_prefix(run, reference)
        n = len(reference.actions)
        if k < n and not (self.prefixes and k):
            return replay(self.bench, task, run)
        cp = self._checkpoint(task)
        if cp.episode is None:
            return replay(self.bench, task, run)
        if k == n == len(run.actions):  # the reference run itself: its end snapshot is shared
            return Replay(fork(cp.episode), cp.start, cp.end, list(cp.steps))
        episode = fork(cp.episode if k == n else cp.at[k])
        steps = cp.steps[:k]
        for i in range(k, len(run.actions)):
            step = self.bench.execute(episode, run.actions[i])
            steps.append(step)
            if step.error is not None:
                return Replay(episode, cp.start, self.bench.snapshot(episode), steps, i)
        return Replay(episode, cp.start, self.bench.snapshot(episode), steps)
