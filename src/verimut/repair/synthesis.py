"""Synthesis: the checks proposed for each task with a confirmed false accept, from its reference run's own effect
(recorded in the manifest) and each false accept's start and end snapshots.

- one count assertion per collection the reference run adds to: exactly as many records added as the reference
  adds (`AddedExactly`);
- one count assertion per list field the reference run grows in records it updates (a queue, a participant
  list): exactly as many items added to it as the reference adds (`ItemsAddedExactly`), since a repeated item
  hides inside one updated record;
- a no-change assertion (`Unchanged`) for a collection the reference leaves alone, where a false accept changes
  it and the count assertions do not already reject it; for an out-of-scope write's false accept (family
  `extra-oos`), for every collection it changes that the reference leaves alone, whether or not a count rejects
  it too;
- for a false accept the frame checks above do not reject (a wrong pinned value, a swapped run whose task's
  effect is absent): one postcondition (`Carries`) it fails, naming a value the reference writes and the task
  pins. Free text the task does not pin is never checked;
- for an answer family's false accept (an answer dropped, wrong, a superstring, a hedge): one answer check
  (`AnswerStates`) on the value it edits: the answer states it as a whole value of its kind, in any form, and
  no value of that kind the reference answer does not (a dropped answer: the reference answer's first value);
- for a false accept no check of the state rejects, a trace check over the run's write calls, as the reference
  makes them: the values a trace-only argument carries (`CallsWith`: an invitation's address, which the state
  keeps no record of), else how many times a write it calls more or less often is called (`CallsExactly`: a page
  posted again, counted by a verifier that grades the request log).

Where the audit recorded what each verifier read (`findings/read_map.py`), the frame checks come from that map
instead: a check goes on what the verifier does not read, never on what it already checks. `Unchanged` guards each
of the verifier's confirmed blind spots (never read on any run, flipped with the verdict unchanged) and each blind
spot a false accept lands in, so a write there the audit never planted is rejected too; the reference's counts are
proposed only for a blind spot or a collection where a false accept differs (the verifier read it and still passed
that difference); a collection it reads that no false accept differs in is not re-checked. Without recorded reads
(an adapter with no `verify_reading`, a goal-contract verifier) the checks are proposed as above.

A check that a correct run of the task fails (its control, a harmless cell, an alternative run the oracle
confirmed, whatever the original verifier said of it) is dropped, and the report says which check and which run:
the repair's honest limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

import msgspec

from verimut.core.benchmark import Benchmark, resolve
from verimut.core.records import CellResult, Manifest
from verimut.core.replay import Replayer
from verimut.core.run import Action
from verimut.findings import read_map
from verimut.grammar import answers as answer_values
from verimut.grammar.faults import spec_of
from verimut.grammar.pairs import SWAP
from verimut.grammar.pinned import index_values
from verimut.oracle import state as oracle
from verimut.repair.checks import (
    AddedExactly,
    AnswerStates,
    CallsExactly,
    CallsWith,
    Carries,
    ChangesWithin,
    Check,
    ItemsAddedExactly,
    RemovedExactly,
    Unchanged,
    failures,
    grown_lists,
    postconditions,
)


def ends_of(bench: Benchmark, m: Manifest, cell_ids: Sequence[str]) -> dict[str, tuple[Any, Any]]:
    """(start, end) snapshots of the cells, in manifest order (a run extending the reference forks its end)."""
    replayer = Replayer(resolve(bench), {t: f.reference for t, f in m.tasks.items()})
    wanted = set(cell_ids)
    out = {}
    for cell in m.cells:
        if cell.cell_id in wanted:
            assert cell.run is not None
            done = replayer.replay(cell.run_task, cell.run)
            out[cell.cell_id] = (done.start, done.end)
    return out


class TaskRepair(msgspec.Struct):
    task: str
    checks: list[Check]
    targets: list[str]  # the confirmed false accepts of this task (the swap census's effect-absent ones too)
    caught: dict[str, list[str]] = {}  # false accept -> the checks it fails
    unrepaired: dict[str, str] = {}  # false accept -> why no check rejects it
    dropped: dict[str, str] = {}  # check -> the correct run it would reject, and why
    pinned_by: dict[str, str] = {}  # postcondition check -> where the task pins its value, when known
    # each check's kind, in order (`AddedExactly`, ...): summary.json writes a check as its fields only, and two
    # kinds have the same fields, so reading it back typed (`report.read`) needs them
    kinds: list[str] = []
    # From the measured read map (None: no reads were recorded for this verifier, the checks as before): the
    # blind spots the frame checks guard, the collections it reads that are left to it, the blind spots left out
    # (not flipped, and no false accept lands there). Collections as the map names them.
    guards: list[str] | None = None
    left_to_verifier: list[str] = []
    unguarded: list[str] = []


class Guarded(msgspec.Struct, frozen=True):
    """What one verifier's measured read map puts the frame checks on (collections as the map names them)."""

    blind: list[str]  # the blind spots guarded: confirmed ones, and those a false accept lands in
    read: list[str]  # collections it read (always or sometimes): no check unless a false accept differs there
    unguarded: list[str]  # blind spots left out: not flipped, and no false accept lands there


def guarded(vmap: read_map.VerifierMap, rows: Sequence[CellResult]) -> Guarded:
    """Where `vmap`'s verifier gets frame checks, given its task's false accepts `rows`."""
    landed = {read_map.name_of(d.collection) for r in rows for d in r.evidence.differs_from_reference or []}
    spots = [b for b in vmap.blind_spots if b.check != read_map.REFUTED]
    blind = [b.collection for b in spots if b.check == read_map.CONFIRMED or b.collection in landed]
    read = [c for c, level in vmap.collections.items() if level != read_map.NEVER]
    return Guarded(blind, read, [b.collection for b in spots if b.collection not in blind])


def checked_collections(checks: Sequence[Check]) -> set[str]:
    """The collections checks name, as the read map names them (a check of the answer or the calls names none)."""
    return {read_map.name_of(c) for k in checks if isinstance(c := getattr(k, "collection", None), str)}


def _named(m: Manifest, collection: str) -> list[str]:
    """The oracle's collections for one the map names: an assigned-key collection's new records are apart."""
    assigned = any(fnmatchcase(collection, glob) for glob in m.assigned_keys)
    return [collection, collection + oracle.NEW] if assigned else [collection]


def _candidates(
    m: Manifest,
    task: str,
    rows: Sequence[CellResult],
    ends: Mapping[str, tuple[Any, Any]],
    guard: Guarded | None = None,
) -> list[Check]:
    """Every check proposed for `task`: counts from the reference effect, then `Unchanged` where needed. With
    `guard` (the verifier's measured read map), counts only where it does not read or a false accept differs, and
    `Unchanged` on each blind spot guarded that the reference leaves alone."""
    effect = m.tasks[task].effect
    touched = {d.collection for d in effect}
    counted = effect
    if guard is not None:
        differs = {d.collection for r in rows for d in r.evidence.differs_from_reference or []}
        counted = [d for d in effect if read_map.name_of(d.collection) in guard.blind or d.collection in differs]
    checks: list[Check] = [AddedExactly(d.collection, len(d.added)) for d in counted if d.added]
    checks += [ItemsAddedExactly(d.collection, f, n) for d in counted for f, n in grown_lists(d).items()]
    if guard is not None:
        # telemetry the checks' diff leaves out whole (web.web_requests) gets no guard: one there could never fail
        left_out = [p for p in m.ignore if "[" not in p]
        checks += [
            Unchanged(c)
            for b in guard.blind
            for c in _named(m, b)
            if c not in touched and not any(fnmatchcase(c, p) for p in left_out)
        ]
    for row in rows:
        start, end = ends[row.cell_id]
        # An out-of-scope write is a frame violation by construction: name each collection it
        # changes, even when a count already rejects it (the count says how many, not where).
        if not spec_of(row.family).needs_out_of_scope and failures(checks, start, end, m.ignore):
            continue
        differs = {d.collection for d in row.evidence.differs_from_reference or []}
        for d in oracle.compare(start, end, m.ignore, base=start):
            if d.collection in touched and d.collection not in differs:
                continue  # the task's own change, as the reference makes it
            if d.collection not in touched:
                new: Check | None = Unchanged(d.collection)
            elif not spec_of(row.family).needs_out_of_scope:
                continue  # a duplicate inside the task's own collections: the counts' business
            else:
                new = _within(d, next(e for e in effect if e.collection == d.collection), checks)
            if new is not None and new not in checks:
                checks.append(new)
    return checks


def _within(d: oracle.CollectionDiff, ref: oracle.CollectionDiff, checks: Sequence[Check]) -> Check | None:
    """The check naming where an out-of-scope write lands in collection `d`, which the task changes too (`ref`)."""
    if d.added and not any(isinstance(c, AddedExactly) and c.collection == d.collection for c in checks):
        return AddedExactly(d.collection, 0)  # the reference only updates there; the run also adds
    if len(d.removed) != len(ref.removed):
        return RemovedExactly(d.collection, len(ref.removed))  # the write deletes another record there
    if d.changed:
        keys = sorted({c.key for c in ref.changed})
        return ChangesWithin(d.collection, keys, sorted({f for c in ref.changed for f in c.fields}))
    return None


def _correct_run_failing(
    check: Check,
    correct: Sequence[CellResult],
    ends: Mapping[str, tuple[Any, Any]],
    ignore: Sequence[str],
    answers: Mapping[str, str],
    calls: Mapping[str, Sequence[Action]],
) -> str | None:
    """Why `check` would reject one of the task's correct runs (the first it fails), or None."""
    for r in correct:
        why = failures([check], *ends[r.cell_id], ignore, answers.get(r.cell_id, ""), calls.get(r.cell_id, ()))
        if why:
            kind = (
                "; an alternative run, which the oracle confirms ends as the reference does"
                if spec_of(r.family).is_alternative
                else ""
            )
            return f"it fails the correct run {r.cell_id} ({why[0]}{kind})"
    return None


class _Kept:
    """The checks a task's correct runs all pass: each check tried is admitted, or dropped with why."""

    def __init__(
        self,
        correct: Sequence[CellResult],
        ends: Mapping[str, tuple[Any, Any]],
        ignore: Sequence[str],
        answers: Mapping[str, str],
        calls: Mapping[str, Sequence[Action]],
    ) -> None:
        self.correct, self.ends, self.ignore, self.answers, self.calls = correct, ends, ignore, answers, calls
        self.dropped: dict[str, str] = {}  # check -> the correct run it would reject, and why
        self.blocked: dict[str, list[str]] = {}  # false accept -> the checks it fails that were dropped

    def admits(self, check: Check, target: str | None = None) -> bool:
        """Whether `check` passes every correct run; if not it is dropped, and held against `target` (the false
        accept it would have rejected)."""
        why = self.dropped.get(str(check)) or _correct_run_failing(
            check, self.correct, self.ends, self.ignore, self.answers, self.calls
        )
        if why:
            self.dropped[str(check)] = why
            if target is not None:
                self.blocked.setdefault(target, []).append(str(check))
        return not why


def _pick(usable: Sequence[Carries], row: CellResult) -> Carries:
    """The postcondition that names what a false accept changed: a wrong value's own field when it says which."""
    moved = row.evidence.detail.get("from")
    return next((c for c in usable if moved is not None and c.value == moved), usable[0])


def answer_check(m: Manifest, row: CellResult, start: Any) -> AnswerStates | None:
    """The answer check that names what an answer family's false accept edited (None: no value to name).
    `start`: the task's clean start, where a name's rivals are found (`AnswerStates`)."""
    cell = next((c for c in m.cells if c.cell_id == row.cell_id), None)
    detail = row.evidence.detail or (cell.detail if cell is not None else {})
    reference = str(detail.get("reference_answer") or m.tasks[row.task].reference_answer)
    kind, value = str(detail.get("kind", "")), str(detail.get("value", ""))
    index = index_values(start)
    if value and not kind:  # a probe's cell names the reference answer, not a value's kind: the answer's own
        found = answer_values.values(value)
        if len(found) != 1 or found[0].text != value.strip():
            return None
        kind, value = found[0].kind, found[0].text
    if not value:  # a dropped answer: the reference's first value that is one (a capitalized "You" is no name)
        stated = [
            v
            for v in answer_values.values(reference)
            if v.kind != answer_values.NAME or index.places_of.get(f"str:{v.text}")
        ]
        if not stated:
            return None
        kind, value = stated[0].kind, stated[0].text
    allowed = sorted(set(answer_values.tokens(reference, kind)))
    if kind != answer_values.NAME:
        return AnswerStates(kind, value, allowed)
    places = index.places_of.get(f"str:{value}", [])
    rivals = {
        v
        for p in places
        for v in index.by_place.get(p, [])
        if isinstance(v, str) and v != value and answer_values.values(v)[:1] == [answer_values.Value(v, kind, 0)]
    }
    return AnswerStates(kind, value, allowed or [value], sorted(rivals))


def trace_checks(m: Manifest, wanted: Sequence[Action], made: Sequence[Action]) -> list[Check]:
    """The trace checks that tell a run's write calls `made` from its task's reference's `wanted`: for each
    trace-only argument whose values differ, `CallsWith`; for each write called another number of times,
    `CallsExactly`."""
    out: list[Check] = []
    for tool, args in m.trace_args.items():
        for arg in args:
            ref = [a.args.get(arg) for a in wanted if a.name == tool]
            got = [a.args.get(arg) for a in made if a.name == tool]
            if sorted(map(oracle.canonical, ref)) != sorted(map(oracle.canonical, got)):
                out.append(CallsWith(tool, arg, ref))
    for tool in sorted({a.name for a in (*wanted, *made)}):
        n = sum(a.name == tool for a in wanted)
        if n != sum(a.name == tool for a in made):
            out.append(CallsExactly(tool, n))
    return out


def synthesize(
    m: Manifest,
    ends: Mapping[str, tuple[Any, Any]],
    false_accepts: Sequence[CellResult],
    passing: Sequence[CellResult] = (),
    answers: Mapping[str, str] | None = None,
    calls: Mapping[str, Sequence[Action]] | None = None,
    reference_calls: Mapping[str, Sequence[Action]] | None = None,
    maps: Mapping[str, read_map.VerifierMap] | None = None,
) -> list[TaskRepair]:
    """Checks per task, from the reference effect and each false accept's (start, end) snapshots.

    Frame checks first; then, for each false accept they do not reject, one postcondition
    (`Carries`) it fails: a value the reference writes and the task pins. `passing`: the task's
    cells a repaired verifier must still pass (controls, harmless cells, alternative runs), with
    their snapshots in `ends` too. A check one of them fails is dropped, and said so.
    `false_accepts` may hold swap cells (family `swap`): postconditions only, since another task's
    run differs everywhere by construction. `answers`: each cell's final answer (cell id -> text), which the
    answer checks read; an answer family's false accept gets one (`answer_check`). `calls`: each cell's write calls,
    which the trace checks read, and `reference_calls` each task's reference run's; without them, no trace check.
    `maps`: each verifier's measured read map (task -> map, `findings/read_map.py`), where the audit recorded reads:
    the frame checks of a task with one go on what its verifier does not read (`guarded`).
    """
    answers = answers or {}
    calls, reference_calls = calls or {}, reference_calls or {}
    by_task: dict[str, list[CellResult]] = {}
    for row in false_accepts:
        by_task.setdefault(row.task, []).append(row)
    keep: dict[str, list[CellResult]] = {}
    for row in passing:
        keep.setdefault(row.task, []).append(row)
    repairs = []
    for task, rows in by_task.items():
        kept = _Kept(keep.get(task, []), ends, m.ignore, answers, calls)
        frame_rows = [r for r in rows if r.family != SWAP]
        vmap = (maps or {}).get(task)
        guard = guarded(vmap, frame_rows) if vmap is not None and frame_rows else None
        candidates = _candidates(m, task, frame_rows, ends, guard) if frame_rows else []
        checks: list[Check] = [c for c in candidates if kept.admits(c)]
        dropped, blocked = kept.dropped, kept.blocked
        fix = TaskRepair(task, checks, [r.cell_id for r in rows], dropped=dropped)
        posts = postconditions(m.tasks[task])
        # a dropped answer last: the check of a value another answer fault edits rejects it too
        for row in sorted(rows, key=lambda r: r.family == "answer-drop"):
            start, end = ends[row.cell_id]
            if failures(checks, start, end, m.ignore, answers.get(row.cell_id, "")):
                continue
            if spec_of(row.family).needs_answer_channel:
                said = answer_check(m, row, start)
                if said is not None and said not in checks and kept.admits(said, row.cell_id):
                    checks.append(said)
                continue  # the end state is the reference's: no postcondition separates it
            failing = [c for c in posts if failures([c], start, end, m.ignore)]
            usable = [c for c in failing if kept.admits(c, row.cell_id)]
            if usable:
                chosen = _pick(usable, row)
                checks.append(chosen)
                if row.evidence.detail.get("pinned_by") and row.evidence.detail.get("from") == chosen.value:
                    fix.pinned_by[str(chosen)] = str(row.evidence.detail["pinned_by"])
                continue
            # No check of the state rejects it: its effect is in the calls alone (an invitation's address, a
            # write repeated where the compared state keeps no record of it). The first trace check that holds.
            if row.cell_id in calls and task in reference_calls and row.family != SWAP:
                traced = [c for c in trace_checks(m, reference_calls[task], calls[row.cell_id]) if c not in checks]
                chosen_trace = next((c for c in traced if kept.admits(c, row.cell_id)), None)
                if chosen_trace is not None:
                    checks.append(chosen_trace)
        if guard is not None:  # a guard whose check a correct run fails is dropped (and said so), not guarded
            checked = checked_collections(checks)
            changed = {read_map.name_of(d.collection) for d in m.tasks[task].effect}
            fix.guards = [b for b in guard.blind if b in checked]
            # not flipped with no false accept there; telemetry the diff leaves out; a guard a correct run fails
            fix.unguarded = sorted({*guard.unguarded, *(b for b in guard.blind if b not in checked)})
            fix.left_to_verifier = sorted((changed & set(guard.read)) - checked)
        for row in rows:
            failed = failures(
                checks, *ends[row.cell_id], m.ignore, answers.get(row.cell_id, ""), calls.get(row.cell_id, ())
            )
            if failed:
                fix.caught[row.cell_id] = failed
            else:
                fix.unrepaired[row.cell_id] = _why_open(row, blocked.get(row.cell_id, []), dropped)
        repairs.append(fix)
    return repairs


def _why_open(row: CellResult, blocked: Sequence[str], dropped: Mapping[str, str]) -> str:
    """Why no check rejects a false accept: the repair's honest limit, in one sentence."""
    where = ", ".join(d.collection for d in row.evidence.differs_from_reference or [])
    if blocked:
        return "the checks that would reject it also reject a correct run, so were dropped: " + "; ".join(
            f"{c} ({dropped[c]})" for c in blocked
        )
    if dropped and row.family != SWAP:
        return f"the checks that would reject it also reject a correct run, so were dropped: {', '.join(dropped)}"
    if spec_of(row.family).needs_answer_channel:
        return (
            "its answer states the reference's value whole and no second candidate the answer check knows of "
            "(a name's rivals are the start state's names where the value sits)"
        )
    if row.family == SWAP:
        return (
            "its end state lacks the task's effect only in free text or in what no written value shows "
            f"({'; '.join(row.evidence.effect_missing or [])}): no postcondition check separates it"
        )
    if spec_of(row.family).needs_out_of_scope:
        return (
            f"the appended write changes only records and fields the task's own run changes ({where}): "
            "no frame check separates it from a correct run"
        )
    return (
        f"differs from the reference ({where}) in no pinned value the reference writes "
        "(free text, a generated id, or a record the reference does not write): no postcondition check applies"
    )
