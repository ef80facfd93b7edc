"""The idempotence census: which writes of a reference run change the state again when repeated."""

from __future__ import annotations

from collections.abc import Iterable

from verimut.core.benchmark import Benchmark
from verimut.core.records import CensusEntry
from verimut.core.run import Run
from verimut.oracle import state as oracle


def idempotence(bench: Benchmark, task: str, run: Run, ignore: Iterable[str]) -> list[CensusEntry]:
    """Replay each write twice from the reference state before it and compare the two states."""
    patterns = list(ignore)
    entries: list[CensusEntry] = []
    for k, action in enumerate(run.actions):
        if not bench.is_write(action):
            continue
        episode = bench.reset(task)
        for prior in run.actions[: k + 1]:
            bench.execute(episode, prior)
        once = bench.snapshot(episode)
        again = bench.execute(episode, action)
        twice = bench.snapshot(episode)
        changes = oracle.compare(once, twice, patterns)
        what = "; ".join(f"{d.collection}: {d.counts()}" for d in changes)
        entries.append(CensusEntry(k, action.name, bool(changes), what, again.error))
    return entries
