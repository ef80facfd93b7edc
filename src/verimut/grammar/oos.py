"""Out-of-scope writes: the suite's library of reachable writes, and which of them fall outside a task's effect.

The library is every distinct write of the suite's reference runs: calls the benchmark's own API
accepts, with arguments that make sense in that world. For one task, each write it does not make
itself is executed on its reference end state (a fork of it when the adapter forks, else a replay
from reset), and kept when the end-state diff touches something the reference run does not change.
The pure parts (`suite_of`, `library`, `outside`) are separate from the functions that drive
the benchmark (`trial`, `page_trial`).

With `--aim` (`aimed`), the writes kept are narrowed by what the task's verifier read on its reference run: a write
that lands only in confirmed blind spots is proven unchecked by the read map, so one per blind spot (or per
verifier) is planted, first, and stands for the rest; every write into a collection the verifier reads is kept.

Where a task is one page (MiniWoB++: another task's writes name elements this page does not have, and the page's
episode ends at the task's submit, so nothing appended after the run is done), the adapter reads the page's own
writes the task never mentions (`page_writes`), and `page_trial` tries each before the task's first interaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from verimut.core.benchmark import Adapter
from verimut.core.replay import replay
from verimut.core.run import Action, Run
from verimut.grammar.faults import ON_PAGE, OutOfScope, Unplanted, before
from verimut.oracle import state as oracle


class Candidate(msgspec.Struct, frozen=True):
    source_task: str
    source_action: int
    action: Action


# Candidates tried per tool and task before the tool is given up (when none of them is kept).
TRIES_PER_TOOL = 3


def on_page(task: str, actions: Iterable[Action]) -> list[Candidate]:
    """The page's own writes as candidates, in the adapter's order (source: the task itself, at ON_PAGE)."""
    return [Candidate(task, ON_PAGE, a) for a in actions]


def suite_of(task: str) -> str:
    """A task's suite: its id's prefix before "/" (the whole benchmark when ids have none)."""
    return task.split("/", 1)[0] if "/" in task else ""


def _key(action: Action) -> bytes:
    return oracle.canonical([action.name, action.args])


def library(runs: Mapping[str, Run], writes: Mapping[str, Sequence[bool]]) -> dict[str, list[Candidate]]:
    """Per suite, every distinct write (by name and arguments) of its tasks' runs, first occurrence first."""
    out: dict[str, dict[bytes, Candidate]] = {}
    for task, run in runs.items():
        seen = out.setdefault(suite_of(task), {})
        for i, (action, is_write) in enumerate(zip(run.actions, writes[task])):
            if is_write:
                seen.setdefault(_key(action), Candidate(task, i, action))
    return {suite: list(found.values()) for suite, found in out.items()}


def reads(runs: Mapping[str, Run], is_read: Mapping[str, Sequence[bool]]) -> dict[str, list[Candidate]]:
    """Per suite, one read per tool of its tasks' runs: the first without arguments, else the first."""
    out: dict[str, dict[str, Candidate]] = {}
    for task, run in runs.items():
        seen = out.setdefault(suite_of(task), {})
        for i, (action, read) in enumerate(zip(run.actions, is_read[task])):
            if read and (action.name not in seen or (seen[action.name].action.args and not action.args)):
                seen[action.name] = Candidate(task, i, action)
    # Argument-free reads first: they read this task's world as well as their own, so they deliver.
    return {s: sorted(found.values(), key=lambda c: bool(c.action.args)) for s, found in out.items()}


def observers(runs: Mapping[str, Run], is_read: Mapping[str, Sequence[bool]]) -> dict[str, list[Action]]:
    """Per suite, every distinct read (by name and arguments) of its tasks' runs, argument-free ones first: the
    reads an end state is observed through (oracle.observed). A list-everything read reveals most differences,
    so putting those first ends most observations at the first read."""
    out: dict[str, dict[bytes, Action]] = {}
    for task, run in runs.items():
        seen = out.setdefault(suite_of(task), {})
        for action, read in zip(run.actions, is_read[task]):
            if read:
                seen.setdefault(_key(action), action)
    return {s: sorted(found.values(), key=lambda a: bool(a.args)) for s, found in out.items()}


def borrowed_reads(task: str, run: Run, lib: Mapping[str, Sequence[Candidate]]) -> list[Candidate]:
    """The suite's reads of tools this task's own run does not call."""
    own = {a.name for a in run.actions}
    return [c for c in lib.get(suite_of(task), ()) if c.action.name not in own]


def candidates(task: str, run: Run, lib: Mapping[str, Sequence[Candidate]]) -> list[Candidate]:
    """The suite's writes this task's own run does not make (repeating its own is the `extra` family's)."""
    own = {_key(a) for a in run.actions}
    return [c for c in lib.get(suite_of(task), ()) if _key(c.action) not in own]


def _content(item: Any) -> bytes:
    """A record's fields with its id aside: a re-added record gets a new generated id, not new content."""
    record = _record(item)
    if isinstance(record, dict):
        record = {f: v for f, v in record.items() if f not in ("id", "id_")}
    return oracle.canonical(record)


def outside(change: Sequence[oracle.CollectionDiff], effect: Sequence[oracle.CollectionDiff]) -> list[str]:
    """The collections where `change` (from the reference end) touches what `effect` (the reference's) does not.

    Outside means: a collection the effect leaves alone; or, in one it changes, a record it does not
    touch (by key; by content in a multiset), or a field of a record it changes that it leaves alone.
    Setting a field the effect sets, or re-adding a record it adds, is inside (wrong value, duplicate).
    """
    by_name = {d.collection: d for d in effect}
    found: list[str] = []
    for d in change:
        e = by_name.get(d.collection)
        if e is None or _touches_outside(d, e):
            found.append(d.collection)
    return found


def _touches_outside(d: oracle.CollectionDiff, e: oracle.CollectionDiff) -> bool:
    keys = {x["key"] for x in (*e.added, *e.removed) if oracle.is_keyed_item(x)} | {c.key for c in e.changed}
    contents = {_content(x) for x in (*e.added, *e.removed)}
    for x in (*d.added, *d.removed):
        if oracle.is_keyed_item(x) and x["key"] in keys:
            continue
        if _content(x) in contents:
            continue
        return True
    fields = {c.key: set(c.fields) for c in e.changed}
    for c in d.changed:
        if c.key not in keys or not set(c.fields) <= fields.get(c.key, set(c.fields)):
            return True
    return False


def apart(change: Sequence[oracle.CollectionDiff], effect: Sequence[oracle.CollectionDiff]) -> bool:
    """Whether `change` (from the reference end) leaves every record the effect touches as the reference left it:
    the task's own effect still done, beside whatever else changed. A page write that ends the task's episode
    (click-widget: another radio button clicked first) leaves the task's own clicks undone: not apart."""
    by_name = {d.collection: d for d in effect}
    for d in change:
        e = by_name.get(d.collection)
        if e is None:
            continue
        if not e.added and not e.removed and not e.changed:
            continue
        if _keys(d) & _keys(e) or (not _keys(d) and not _keys(e)):
            return False
    return True


def _keys(d: oracle.CollectionDiff) -> set[Any]:
    return {x["key"] for x in (*d.added, *d.removed) if oracle.is_keyed_item(x)} | {c.key for c in d.changed}


def restored(
    change: Sequence[oracle.CollectionDiff], undo: Sequence[oracle.CollectionDiff]
) -> list[oracle.CollectionDiff]:
    """`change` without the fields it sets back to the task's pristine value (`undo`: from the task's start to its
    pristine state, the adapter's `pristine`).

    A task that starts from a world broken on purpose (tau2 telecom: airplane mode on, the APN broken) asks for that
    breakage to be undone: a write that only restores what the task's own setup broke is the task's fix, not a side
    effect outside it, so the out-of-scope trial does not plant it. Only changed fields are matched (a setup that
    adds or removes records is not undone this way).
    """
    back = {(d.collection, c.key, f): pair[1] for d in undo for c in d.changed for f, pair in c.fields.items()}
    out: list[oracle.CollectionDiff] = []
    for d in change:
        changed = []
        for c in d.changed:
            left = {
                f: pair
                for f, pair in c.fields.items()
                if (d.collection, c.key, f) not in back or back[(d.collection, c.key, f)] != pair[1]
            }
            if left:
                changed.append(oracle.Change(c.key, left))
        if d.added or d.removed or d.reordered or changed:
            out.append(msgspec.structs.replace(d, changed=changed))
    return out


def _record(item: Any) -> Any:
    return item["record"] if oracle.is_keyed_item(item) else item


def _bounded(tried: Iterable[Candidate], kept: list[OutOfScope]) -> Iterable[Candidate]:
    """The candidates to try, in order: per tool, until one of its is kept, at most TRIES_PER_TOOL of them."""
    tries: dict[str, int] = {}
    for c in tried:
        tool = c.action.name
        if tries.get(tool, 0) >= TRIES_PER_TOOL or any(k.action.name == tool for k in kept):
            continue
        tries[tool] = tries.get(tool, 0) + 1
        yield c


def _kept(
    c: Candidate, change: Sequence[oracle.CollectionDiff], effect: Sequence[oracle.CollectionDiff]
) -> list[OutOfScope]:
    """The candidate as an out-of-scope write, when what it changed lies outside the task's effect."""
    if not (change and outside(change, effect)):
        return []
    touches = tuple(d.collection for d in change)
    return [
        OutOfScope(
            c.source_task,
            c.source_action,
            c.action,
            touches,
            "; ".join(f"{d.collection} ({d.counts()})" for d in change),
        )
    ]


def trial(
    bench: Adapter,
    task: str,
    run: Run,
    tried: Iterable[Candidate],
    effect: Sequence[oracle.CollectionDiff],
    reference_end: Any,
    ignore: Sequence[str],
    start: Any = None,
    undo: Sequence[oracle.CollectionDiff] = (),
) -> tuple[list[OutOfScope], int]:
    """Execute candidates after the task's reference run; keep those that change something outside its effect
    (once what merely undoes the task's own setup, `undo`, is set aside: `restored`).

    Returns the kept ones and how many were executed. A candidate whose call raises, or that
    changes nothing, is dropped. With an adapter that forks, the reference run is replayed once and
    every candidate runs on a fork of its end; without `fork`, each try is a full replay.

    The search is bounded per tool, so a task's tries grow with the suite's tools, not its tasks:
    a tool's candidates are tried in order until one is kept, at most `TRIES_PER_TOOL` of them. A
    try costs a fork, a call, a snapshot and a diff (on tau2-bench about 0.45 s, 0.34 s of it the
    fork, which rebuilds the environment). What the bound loses: the variants where the same tool,
    with other arguments, writes another collection (on AgentDojo, Slack's per-user inboxes and
    channels: docs/side-effects.md).
    """
    kept: list[OutOfScope] = []
    executed = 0
    base = None
    if bench.fork is not None:
        first = replay(bench, task, run)
        if first.failed_at is not None:
            return kept, executed
        base = first.episode
    for c in _bounded(tried, kept):
        executed += 1
        if bench.fork is not None:
            episode = bench.fork(base)
        else:
            done = replay(bench, task, run)
            if done.failed_at is not None:
                return kept, executed
            episode = done.episode
        try:
            step = bench.execute(episode, c.action)
        except Exception:  # noqa: BLE001  (a call the benchmark refuses in this world is no candidate)
            step = None
        if step is not None and step.error is None:
            change = oracle.compare(reference_end, bench.snapshot(episode), ignore, base=start)
            kept += _kept(c, restored(change, undo) if undo else change, effect)
    return kept, executed


def page_trial(
    bench: Adapter,
    task: str,
    run: Run,
    tried: Iterable[Candidate],
    effect: Sequence[oracle.CollectionDiff],
    reference_end: Any,
    ignore: Sequence[str],
    start: Any = None,
) -> tuple[list[OutOfScope], int]:
    """Try the page's own writes, each inserted before the task's first interaction (`before`) in a replay of the
    run from reset; keep those whose end differs from the reference end outside the task's effect and nowhere
    inside it (`apart`: the task's own interactions still done, not cut short by the write).

    Bounded as `trial` is (per tool, until one is kept). A write that fails on the page (its element hidden by then)
    or leaves the end as the reference's is dropped; so is one after which the run itself fails.
    """
    kept: list[OutOfScope] = []
    executed = 0
    at = before([bench.is_write(a) for a in run.actions])
    for c in _bounded(tried, kept):
        executed += 1
        actions = list(run.actions)
        actions.insert(at, c.action)
        done = replay(bench, task, run.replace_actions(actions))
        if done.failed_at is None:
            change = oracle.compare(reference_end, done.end, ignore, base=start)
            kept += _kept(c, change, effect) if apart(change, effect) else []
    return kept, executed


# How far the aimed search plants (`--aim`): one write per confirmed blind spot, or one per verifier.
BLIND_SPOT, VERIFIER = "blind-spot", "verifier"
AIMS = (BLIND_SPOT, VERIFIER)


def aimed(kept: Sequence[OutOfScope], blind: Iterable[str], per: str) -> list[OutOfScope]:
    """The out-of-scope writes an aimed search plants, of those the trial kept (in its order), given the task's
    confirmed blind spots `blind` (collections its verifier never read on the reference end, flipped with the
    verdict unchanged: engine/blind_spots.py).

    A write whose every changed collection is a confirmed blind spot cannot change the verdict. Per blind spot
    (`per` BLIND_SPOT), such a write is planted when it reaches a blind spot no write planted before it reaches (so
    every blind spot a kept write reaches has a planted false accept, and its repair check); per verifier
    (VERIFIER), only the first is. Each write not planted is carried by the planted one that reaches its first
    collection (`covers`, else by the first planted) and reported as proven unchecked. The planted ones come
    first. Every write that touches a collection the verifier reads, or one not confirmed, is kept: only a replay
    says whether the verifier notices it.
    """
    if per not in AIMS:
        raise ValueError(f"unknown aim {per!r} (known: {', '.join(AIMS)})")
    spots = set(blind)
    planted: list[OutOfScope] = []
    covered: list[list[Unplanted]] = []
    by_spot: dict[str, int] = {}  # blind spot -> the planted write (index) that first reached it
    rest: list[OutOfScope] = []
    for c in kept:
        where = [t.removesuffix(oracle.NEW) for t in c.touches]
        if c.source_action == ON_PAGE or not where or not all(t in spots for t in where):
            rest.append(c)
        elif not planted or (per == BLIND_SPOT and not set(where) <= set(by_spot)):
            for t in where:
                by_spot.setdefault(t, len(planted))
            planted.append(c)
            covered.append([])
        else:
            covered[by_spot.get(where[0], 0)].append(Unplanted(c.action.name, where[0], c.source_task, c.source_action))
    aimed_first = [msgspec.structs.replace(c, covers=tuple(u)) for c, u in zip(planted, covered, strict=True)]
    return aimed_first + rest
