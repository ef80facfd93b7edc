"""Checked blind spots: is a collection the verifier never read really one its verdict cannot depend on?

The read recording (core/reads.py) says which collections of the state a verifier took anything out of. A
collection it never read cannot change its verdict, so every write there is unchecked: a blind spot. That is a
claim about the recording, so it is checked the way declared telemetry is (declared.py): on a fork of the task's
reference end, every collection the control's verifier did not read is flipped (a list emptied, each field of a
record of fields moved: `declared.flips`), and the verifier is called again. All of them are flipped together
first (one fork, one call); only when that changes the verdict is each flipped alone, to say which. A collection
whose flip changes the verdict was read after all (the recording missed it) and is no blind spot.

`flip_unread` drives the benchmark (fork, patch, verify); the rest is pure. `confirmed` does the same on a fresh
replay of the reference run while the manifest is built, for the aimed out-of-scope search (`--aim`, oos.aimed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verimut.core.benchmark import Adapter
from verimut.core.reads import STATE, Reads, collections_read
from verimut.core.replay import replay
from verimut.core.run import Run
from verimut.engine.declared import Flip, flips
from verimut.oracle import state as oracle


def unread(end: Any, reads: Reads) -> list[str]:
    """The collections of the end state `end` (a snapshot) that the verifier took nothing out of."""
    state = reads.under(STATE)
    every = list(oracle.collections(end))
    read = collections_read(state, every)
    return [c for c in every if c and c not in read]


def flip_unread(bench: Adapter, episode: Any, run: Run, end: Any, reads: Reads, passed: bool) -> dict[str, bool] | None:
    """Each unread collection that has something to flip -> whether the verdict held with it flipped (True: a
    blind spot, confirmed). None: the adapter cannot fork or patch, so nothing was flipped."""
    if bench.fork is None or bench.patch is None:
        return None
    # (A name with "[" cannot be a pattern: oracle's syntax reads it as a record key. Not flipped, not claimed.)
    found = {c: flips(end, c) for c in unread(end, reads) if "[" not in c}
    testable = [c for c, f in found.items() if f]
    if not testable:
        return {}
    try:
        if _verdict(bench, episode, run, [f for c in testable for f in found[c]]) == passed:
            return dict.fromkeys(testable, True)
        return {c: _verdict(bench, episode, run, found[c]) == passed for c in testable}
    except Exception:  # noqa: BLE001  (the benchmark's verifier on a state it never made: that says nothing)
        return None


def _verdict(bench: Adapter, episode: Any, run: Run, changes: Sequence[Flip]) -> bool:
    assert bench.fork is not None and bench.patch is not None
    copy = bench.fork(episode)
    for f in changes:
        bench.patch(copy, f.path, f.value)
    return bool(bench.verify(copy, run).passed)


def can_confirm(bench: Adapter) -> str | None:
    """Why blind spots cannot be confirmed for `bench` (so `--aim` changes nothing), or None when they can."""
    if bench.verify_reading is None:
        return f"{bench.name} does not record what its verifiers read (no verify_reading)"
    if bench.fork is None or bench.patch is None:
        return f"{bench.name} cannot fork and patch an episode, so no blind spot is confirmed by flipping"
    return None


def confirmed(bench: Adapter, task: str, run: Run) -> set[str]:
    """The confirmed blind spots of `task`'s verifier on its reference end: what its control will find (the
    scorer's `unread_flipped`), found before any cell is scored. Empty when the reference run raises, its verifier
    raises or fails it (a blind spot of a failing verdict says nothing of false accepts), or nothing is flipped."""
    if can_confirm(bench) is not None:
        return set()
    assert bench.verify_reading is not None
    done = replay(bench, task, run)
    if done.failed_at is not None:
        return set()
    try:
        verdict, reads = bench.verify_reading(done.episode, run)
    except Exception:  # noqa: BLE001  (the benchmark's verifier raised: its control says so; nothing to aim at)
        return set()
    if not verdict.passed:
        return set()
    flipped = flip_unread(bench, done.episode, run, done.end, reads, True) or {}
    return {c for c, held in flipped.items() if held}
