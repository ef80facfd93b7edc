"""Checked declarations: is what an adapter calls telemetry (or verimut masked) really left ungraded?

Telemetry ("inbox.emails[*].read") and masks ("inbox.emails[*].timestamp") are left out of every
comparison, so a wrong one hides effects or invents false rejects: AgentDojo grades read flags
(workspace/user_task_24, "show me my unread emails", passes only if they end up read). Each is
checked on every task's reference end state, before anything is scored: flip what it names (a flag
to its other value, a log emptied, a timestamp moved a day), call that task's verifier on the
flipped copy, and compare with its verdict on the unflipped one. A declaration that changes a
verdict is graded state: the manifest drops it and names the task.

All of a task's declarations are flipped together first (one fork, one verifier call): only when
that changes the verdict is each flipped alone, to say which. (Two flips that cancel each other out
would hide both; none of the built-in adapters' declarations can.) The result is per task: a
declaration is state for the tasks whose verifiers grade it, and stays telemetry for the others
(slack/user_task_0 grades the web request log, because its task is to read a page; a task that reads
a page on the way to something else does not).

`flips` is pure; `graded` drives the benchmark (fork, patch, verify).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

import msgspec

from verimut.core.benchmark import Adapter
from verimut.core.run import Run, Verdict
from verimut.oracle import state as oracle

Path = tuple[str, ...]


class Flip(msgspec.Struct, frozen=True):
    path: Path  # where in the snapshot (dict keys and list indices, as strings)
    value: Any  # what it becomes


def flipped(value: Any) -> Any:
    """The value's other state, or `...` when it has none worth testing (None, an empty container)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        try:
            moved = datetime.datetime.fromisoformat(value) + datetime.timedelta(days=1)
        except ValueError:
            return value + " (flipped)"
        text = moved.isoformat(sep=value[10] if len(value) > 10 else "T")
        return text if len(value) > 10 else text[:10]
    if isinstance(value, (list, dict)):
        return type(value)() if value else ...
    return ...


class _Place(msgspec.Struct, frozen=True):
    raw: Path  # the collection's container in the snapshot
    records: dict[str, Path]  # record key -> where the record sits
    whole: bool  # the container is the collection (a list, a record map), not a dict of fields


def _places(node: Any, path: str, raw: Path, out: dict[str, list[_Place]]) -> None:
    """Where each collection's records sit in the snapshot: the mirror of oracle.collections' walk."""
    if isinstance(node, list):
        field = oracle._id_key(node)
        keys = [str(x[field]) for x in node] if field is not None else [str(i) for i in range(len(node))]
        out.setdefault(path, []).append(_Place(raw, {k: (*raw, str(i)) for i, k in enumerate(keys)}, True))
    elif isinstance(node, dict):
        if path and oracle._is_record_map(node):
            out.setdefault(path, []).append(_Place(raw, {str(k): (*raw, str(k)) for k in node}, True))
            return
        scalars = {str(k): (*raw, str(k)) for k, v in node.items() if not isinstance(v, (dict, list))}
        if scalars:
            out.setdefault(path, []).append(_Place(raw, scalars, False))
        for k, v in node.items():
            if isinstance(v, (dict, list)):
                _places(v, f"{path}.{k}" if path else str(k), (*raw, str(k)), out)


def _at(snapshot: Any, path: Path) -> Any:
    node = snapshot
    for seg in path:
        node = node[int(seg)] if isinstance(node, list) else node[seg]
    return node


def flips(snapshot: Any, pattern: str) -> list[Flip]:
    """What flipping `pattern` (a telemetry or mask pattern, oracle's syntax) sets in this snapshot.

    A whole collection is emptied (a dict of fields has each field flipped); a field of every record
    (`[*].f`) or of one (`[key].f`) is flipped; one record (`[key]`) is flipped when it is a scalar. Keys
    (`[#]`, `[+]`) are not values: nothing to flip.
    """
    glob, key, field = oracle._split(pattern)
    if key in ("#", oracle.ASSIGNED):
        return []
    places: dict[str, list[_Place]] = {}
    _places(snapshot, "", (), places)
    targets: list[Path] = []
    for coll, found in places.items():
        if not fnmatchcase(coll, glob):
            continue
        for place in found:
            if key is None:
                targets += [place.raw] if place.whole else list(place.records.values())
                continue
            chosen = list(place.records.values()) if key == "*" else [place.records[key]] * (key in place.records)
            if field is None:
                targets += chosen
            else:
                targets += [
                    (*p, field) for p in chosen if isinstance(_at(snapshot, p), dict) and field in _at(snapshot, p)
                ]
    out = []
    for p in targets:
        value = flipped(_at(snapshot, p))
        if value is not ...:
            out.append(Flip(p, value))
    return out


class Checked(msgspec.Struct, frozen=True):
    """One task's check: the declarations its verifier grades, and those with nothing to flip on its end state."""

    graded: list[str] = []
    untested: list[str] = []
    error: str | None = None  # the verifier raised on a flipped state: that task's check says nothing
    # The verifier's verdict on the reference end as the run left it (unflipped), where the check took one.
    verdict: Verdict | None = None


class OwnVerdict(msgspec.Struct, frozen=True):
    """A task's verifier's verdict on its own reference end as this check took it (`Checked.verdict`, on the
    manifest's replay), and that end's digest as the task sees state (`oracle.digest`). The swap census's diagonal
    cell grades the same run, replayed from the same start, with the same verifier: where its replay ends at the
    same digest it takes this verdict, rather than calling the verifier a second time on an equal state. Only
    where the adapter's replays do not vary; never written (a resumed census builds them again)."""

    digest: str
    verdict: Verdict


def varied(flips_: Sequence[Flip], end: Any, again: Any) -> list[Flip]:
    """The flips at values that differ between two replays' ends `end` and `again` (what a mask is for)."""
    out = []
    for f in flips_:
        try:
            same = _at(end, f.path) == _at(again, f.path)
        except (KeyError, IndexError, TypeError, ValueError):
            same = False
        if not same:
            out.append(f)
    return out


def graded(
    bench: Adapter,
    task: str,
    episode: Any,
    run: Run,
    end: Any,
    patterns: Sequence[str],
    masks: Sequence[str] = (),
    again: Any = None,
    start: Any = None,
) -> Checked:
    """Which of `patterns` the task's verifier grades, flipped on forks of `episode` (its reference end, live; it may
    be graded itself, last, so the caller must not use it after).

    A telemetry pattern claims the field never holds an effect: it is flipped where the reference run moved
    it from `start` (the read flags of the emails it read), or, where the run left it alone, in one record (a
    verifier that checks the whole state notices that). A mask (in `masks`) only where the two replays' ends
    `end` and `again` differ: it says only that a value there is not the run's to choose (a clock's reading),
    and a whole-state verifier notices any other record's value moving, which says nothing about the mask.
    """
    if bench.fork is None or bench.patch is None:
        return Checked(untested=list(patterns))

    def telemetry(p: str) -> list[Flip]:
        every = flips(end, p)
        moved = varied(every, end, start) if start is not None else []
        return moved or every[:1]

    found = {p: varied(flips(end, p), end, again) if p in masks else telemetry(p) for p in patterns}
    testable = [p for p in patterns if found[p]]
    untested = [p for p in patterns if not found[p]]
    if not testable:
        return Checked(untested=untested)
    try:
        together = _verdict(bench, episode, run, [f for p in testable for f in found[p]])
        # With one pattern, nothing is forked from `episode` after this call: it is graded as it is, not on a copy
        # (the caller is done with it). Else the patterns flipped alone below need it as the run left it.
        unflipped = bench.verify(episode if len(testable) == 1 else bench.fork(episode), run)
        before = unflipped.passed
        if together == before:
            return Checked(untested=untested, verdict=unflipped)
        # One pattern flipped alone is the flip just made: calling the verifier again would say the same (42 of
        # AgentDojo's 97 user tasks, most of them workspace's, whose verifiers diff the whole state).
        if len(testable) == 1:
            return Checked(graded=testable, untested=untested, verdict=unflipped)
        hits = [p for p in testable if _verdict(bench, episode, run, found[p]) != before]
    except Exception as e:  # noqa: BLE001  (the benchmark's verifier on a state it never made)
        return Checked(untested=untested, error=f"{type(e).__name__}: {e}")
    return Checked(graded=hits, untested=untested, verdict=unflipped)


def _verdict(bench: Adapter, episode: Any, run: Run, changes: Sequence[Flip]) -> bool:
    assert bench.fork is not None and bench.patch is not None
    copy = bench.fork(episode)
    for f in changes:
        bench.patch(copy, f.path, f.value)
    return bool(bench.verify(copy, run).passed)
