"""Repair: the minimal checks that reject an audit's confirmed false accepts, and no correct run.

For each task with a confirmed false accept, `synthesize` proposes, from the reference run's
own effect (recorded in the manifest):

- one count assertion per collection the reference run adds to: exactly as many records
  added as the reference adds (`AddedExactly`);
- one count assertion per list field the reference run grows in records it updates (a queue,
  a participant list): exactly as many items added to it as the reference adds
  (`ItemsAddedExactly`), since a repeated item hides inside one updated record;
- a no-change assertion (`Unchanged`) for a collection the reference leaves alone, where a
  false accept changes it and the count assertions do not already reject it; for an
  out-of-scope write's false accept (family `extra-oos`), for every collection it changes that
  the reference leaves alone, whether or not a count rejects it too;
- for a false accept the frame checks above do not reject (a wrong pinned value, a swapped
  run whose task's effect is absent): one postcondition (`Carries`) it fails, naming a value
  the reference writes and the task pins. Free text the task does not pin is never checked.

A check that a correct run of the task fails (its control, a harmless cell, an alternative
run the oracle confirmed, whatever the original verifier said of it) is dropped, and the
report says which check and which run: the repair's honest limit.

`write_module` writes the checks as a readable Python module that wraps the original
verifier (its verdict AND the checks); the benchmark's installed package is never edited.
`regrade` replays every cell of the audit (and `regrade_swap` the swap census's effect-absent
acceptances) and grades it with that module, and `report` says what the repair rejects and
whether it rejects any correct run (a new false reject).
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from verimut import oracle
from verimut.benchmark import Benchmark, Verdict, resolve
from verimut.classify import classify_swap
from verimut.coverage import SIDE_EFFECT_FAMILIES
from verimut.errors import AuditError
from verimut.faults import is_alternative
from verimut.records import CellResult, Manifest, Outcome, TaskFacts
from verimut.replay import Replayer
from verimut.run import Run
from verimut.scorer import Judge, effect_missing, outcome_of
from verimut.store import Store

MODULE = "repaired_verifiers.py"


class AddedExactly(msgspec.Struct, frozen=True):
    """The run adds exactly `count` records to `collection`, as the reference run does."""

    collection: str
    count: int

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        added = len(d.added) if d else 0
        return None if added == self.count else f"{self.collection}: {added} added, expected {self.count}"

    def __str__(self) -> str:
        return f"AddedExactly({self.collection!r}, {self.count})"


class RemovedExactly(msgspec.Struct, frozen=True):
    """The run removes exactly `count` records from `collection`, as the reference run does."""

    collection: str
    count: int

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        removed = len(d.removed) if d else 0
        return None if removed == self.count else f"{self.collection}: {removed} removed, expected {self.count}"

    def __str__(self) -> str:
        return f"RemovedExactly({self.collection!r}, {self.count})"


class Unchanged(msgspec.Struct, frozen=True):
    """The run leaves `collection` as it found it (the reference run does not touch it)."""

    collection: str

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        return None if d is None else f"{self.collection}: {d.counts()}, expected no change"

    def __str__(self) -> str:
        return f"Unchanged({self.collection!r})"


class ItemsAddedExactly(msgspec.Struct, frozen=True):
    """Over the records of `collection` that change, list field `field` gains exactly `count` items.

    Items are counted as a multiset (end minus start), so a repeated item counts and reordering
    does not: the reference run's own count, whatever order a correct run adds them in.
    """

    collection: str
    field: str
    count: int

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        added = items_added(d, self.field) if d else 0
        if added == self.count:
            return None
        return f"{self.collection}[*].{self.field}: {added} items added, expected {self.count}"

    def __str__(self) -> str:
        return f"ItemsAddedExactly({self.collection!r}, {self.field!r}, {self.count})"


def items_added(d: oracle.CollectionDiff, field: str) -> int:
    """Items that list field `field` gains over the changed records of one collection diff (a multiset)."""
    total = 0
    for change in d.changed:
        before, after = change.fields.get(field, (None, None))
        if isinstance(before, list) and isinstance(after, list):
            total += sum((Counter(map(oracle.canonical, after)) - Counter(map(oracle.canonical, before))).values())
    return total


def grown_lists(d: oracle.CollectionDiff) -> dict[str, int]:
    """The list fields that the changed records of `d` grow, with the items they gain."""
    fields = {f for c in d.changed for f, (a, b) in c.fields.items() if isinstance(a, list) and isinstance(b, list)}
    return {f: n for f in sorted(fields) if (n := items_added(d, f))}


class ChangesWithin(msgspec.Struct, frozen=True):
    """In `collection`, the run changes only the records (by key) and fields the reference run changes.

    For a collection the task itself changes, so `Unchanged` cannot apply: an out-of-scope write
    that updates another record there (another scheduled payment), or another field of the same
    record (the password beside the address), is what it rejects.
    """

    collection: str
    keys: list[str]
    fields: list[str]

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        if d is None:
            return None
        keys = sorted({c.key for c in d.changed} - set(self.keys))
        fields = sorted({f for c in d.changed for f in c.fields} - set(self.fields))
        if not keys and not fields:
            return None
        what = [f"records {keys}" if keys else "", f"fields {fields}" if fields else ""]
        return f"{self.collection}: also changed {' and '.join(w for w in what if w)}, which the task does not change"

    def __str__(self) -> str:
        return f"ChangesWithin({self.collection!r}, {self.keys!r}, {self.fields!r})"


class Carries(msgspec.Struct, frozen=True):
    """Among the records the run adds to `collection` (key None), or in the record `key` it changes
    there, one carries `value` in `field` (field None: the record itself is the value).

    A postcondition: the reference run writes this value there and the task pins it, so a run
    that writes another value (a wrong amount, another recipient) did not do the task. Added
    records are matched by content, not key: their keys are often generated.
    """

    collection: str
    field: str | None
    value: Any
    key: str | None = None
    # Added records only: at least this many carry the value, as many as the reference adds
    # (three equal payments: a run that changes one of them still adds two).
    times: int = 1

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        found = written(d, self.field, self.key) if d else []
        if sum(v == self.value for v in found) >= self.times:
            return None
        where = f"{self.collection}[{self.key}]" if self.key is not None else f"{self.collection} (added)"
        field = f".{self.field}" if self.field is not None else ""
        got = ", ".join(oracle.canonical(v).decode() for v in found) or "nothing"
        times = f"{self.times} x " if self.times > 1 else ""
        return f"{where}{field}: wrote {got}, expected {times}{oracle.canonical(self.value).decode()}"

    def __str__(self) -> str:
        key = "" if self.key is None else f", key={self.key!r}"
        times = "" if self.times == 1 else f", times={self.times}"
        return f"Carries({self.collection!r}, {self.field!r}, {self.value!r}{key}{times})"


def written(d: oracle.CollectionDiff, field: str | None, key: str | None) -> list[Any]:
    """The values a run writes to `field` of the records it adds to one collection (key None) or of record `key`.

    As plain data (a snapshot's datetime becomes its JSON form), as the manifest holds the reference's.
    """
    if key is not None:
        # the oracle diffs a non-dict record as its one field "value"
        got = [c.fields[field or "value"][1] for c in d.changed if c.key == key and (field or "value") in c.fields]
    else:
        records = [x["record"] if oracle.is_keyed_item(x) else x for x in d.added]
        if field is None:
            got = [r for r in records if not isinstance(r, dict)]
        else:
            got = [r[field] for r in records if isinstance(r, dict) and field in r]
    return [msgspec.to_builtins(v) for v in got]


ID_FIELDS = ("id", "id_")  # an added record's own id: generated, so no postcondition names it


def postconditions(facts: TaskFacts) -> list[Carries]:
    """One `Carries` per value the reference effect writes, free text and generated ids left out."""
    free = set(facts.free_text)

    def pinned(v: Any) -> bool:
        return not (isinstance(v, str) and v in free)

    out: dict[str, Carries] = {}  # by str: a value may be a list, unhashable
    for d in facts.effect:
        added: list[Carries] = []
        for item in d.added:
            record = item["record"] if oracle.is_keyed_item(item) else item
            if isinstance(record, dict):
                added += [Carries(d.collection, f, v) for f, v in record.items() if f not in ID_FIELDS and pinned(v)]
            elif pinned(record):
                added.append(Carries(d.collection, None, record))
        times = Counter(map(str, added))
        out |= {str(c): msgspec.structs.replace(c, times=times[str(c)]) for c in added}
        for ch in d.changed:
            for f, (_, new) in ch.fields.items():
                if pinned(new):
                    c = Carries(d.collection, f, new, ch.key)
                    out[str(c)] = c
    return list(out.values())


Check = AddedExactly | ItemsAddedExactly | RemovedExactly | Unchanged | ChangesWithin | Carries


def failures(checks: Sequence[Check], start: Any, end: Any, ignore: Sequence[str]) -> list[str]:
    """The checks that fail from snapshot `start` to snapshot `end` (telemetry and masks ignored)."""
    if not checks:
        return []
    diffs = {d.collection: d for d in oracle.compare(start, end, ignore, base=start)}
    return [why for c in checks if (why := c.fails(diffs)) is not None]


def verify(
    adapter: Benchmark,
    checks: Mapping[str, Sequence[Check]],
    ignore: Sequence[str],
    task: str,
    episode: Any,
    run: Run,
    start: Any,
    run_task: str | None = None,
) -> Verdict:
    """The original verifier's verdict AND the task's checks. `start`: the clean start's snapshot.

    `run_task`: the task whose run the episode holds, when not `task` (the swap census: task j's
    run graded with task i's verifier, through the adapter's `verify_as`).
    """
    end = adapter.snapshot(episode)  # before the verifier, which may change the state
    if run_task is None or run_task == task:
        original = adapter.verify(episode, run)
    else:
        verify_as = resolve(adapter).verify_as
        if verify_as is None:
            raise AuditError(f"{adapter.name} cannot grade one task's run with another's verifier (no verify_as)")
        original = verify_as(task, episode, run)
    mine = checks.get(task, ())
    diffs = {d.collection: d for d in oracle.compare(start, end, ignore, base=start)} if mine else {}
    failed = [why for c in mine if (why := c.fails(diffs)) is not None]
    merged = dict(original.checks) if original.checks else {"verdict": original.passed}
    merged.update({str(c): c.fails(diffs) is None for c in mine})
    detail = f"{original.detail} AND repair checks" + (f" (failed: {'; '.join(failed)})" if failed else "")
    return Verdict(original.passed and not failed, detail, merged)


# --- synthesis ------------------------------------------------------------------------------


OUT_OF_SCOPE = "extra-oos"  # the family whose false accepts are writes the task never asked for


SWAP = "swap"  # the family of a swap census's cells: task j's run graded by task i's verifier


class TaskRepair(msgspec.Struct):
    task: str
    checks: list[Check]
    targets: list[str]  # the confirmed false accepts of this task (the swap census's effect-absent ones too)
    caught: dict[str, list[str]] = {}  # false accept -> the checks it fails
    unrepaired: dict[str, str] = {}  # false accept -> why no check rejects it
    dropped: dict[str, str] = {}  # check -> the correct run it would reject, and why
    pinned_by: dict[str, str] = {}  # postcondition check -> where the task pins its value, when known


def _candidates(m: Manifest, task: str, rows: Sequence[CellResult], ends: Mapping[str, tuple[Any, Any]]) -> list[Check]:
    """Every check proposed for `task`: counts from the reference effect, then `Unchanged` where needed."""
    effect = m.tasks[task].effect
    touched = {d.collection for d in effect}
    checks: list[Check] = [AddedExactly(d.collection, len(d.added)) for d in effect if d.added]
    checks += [ItemsAddedExactly(d.collection, f, n) for d in effect for f, n in grown_lists(d).items()]
    for row in rows:
        start, end = ends[row.cell_id]
        # An out-of-scope write is a frame violation by construction: name each collection it
        # changes, even when a count already rejects it (the count says how many, not where).
        if row.family != OUT_OF_SCOPE and failures(checks, start, end, m.ignore):
            continue
        differs = {d.collection for d in row.evidence.differs_from_reference or []}
        for d in oracle.compare(start, end, m.ignore, base=start):
            if d.collection in touched and d.collection not in differs:
                continue  # the task's own change, as the reference makes it
            if d.collection not in touched:
                new: Check | None = Unchanged(d.collection)
            elif row.family != OUT_OF_SCOPE:
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
    check: Check, correct: Sequence[CellResult], ends: Mapping[str, tuple[Any, Any]], ignore: Sequence[str]
) -> str | None:
    """Why `check` would reject one of the task's correct runs (the first it fails), or None."""
    for r in correct:
        why = failures([check], *ends[r.cell_id], ignore)
        if why:
            kind = (
                "; an alternative run, which the oracle confirms ends as the reference does"
                if is_alternative(r.family)
                else ""
            )
            return f"it fails the correct run {r.cell_id} ({why[0]}{kind})"
    return None


def _pick(usable: Sequence[Carries], row: CellResult) -> Carries:
    """The postcondition that names what a false accept changed: a wrong value's own field when it says which."""
    moved = row.evidence.detail.get("from")
    return next((c for c in usable if moved is not None and c.value == moved), usable[0])


def synthesize(
    m: Manifest,
    ends: Mapping[str, tuple[Any, Any]],
    false_accepts: Sequence[CellResult],
    passing: Sequence[CellResult] = (),
) -> list[TaskRepair]:
    """Checks per task, from the reference effect and each false accept's (start, end) snapshots.

    Frame checks first; then, for each false accept they do not reject, one postcondition
    (`Carries`) it fails: a value the reference writes and the task pins. `passing`: the task's
    cells a repaired verifier must still pass (controls, harmless cells, alternative runs), with
    their snapshots in `ends` too. A check one of them fails is dropped, and said so.
    `false_accepts` may hold swap cells (family `swap`): postconditions only, since another task's
    run differs everywhere by construction.
    """
    by_task: dict[str, list[CellResult]] = {}
    for row in false_accepts:
        by_task.setdefault(row.task, []).append(row)
    keep: dict[str, list[CellResult]] = {}
    for row in passing:
        keep.setdefault(row.task, []).append(row)
    repairs = []
    for task, rows in by_task.items():
        correct = keep.get(task, [])
        checks: list[Check] = []
        dropped: dict[str, str] = {}
        frame_rows = [r for r in rows if r.family != SWAP]
        for check in _candidates(m, task, frame_rows, ends) if frame_rows else []:
            why = _correct_run_failing(check, correct, ends, m.ignore)
            if why:
                dropped[str(check)] = why
            else:
                checks.append(check)
        fix = TaskRepair(task, checks, [r.cell_id for r in rows], dropped=dropped)
        posts = postconditions(m.tasks[task])
        blocked: dict[str, list[str]] = {}  # false accept -> the postconditions it fails that were dropped
        for row in rows:
            start, end = ends[row.cell_id]
            if failures(checks, start, end, m.ignore):
                continue
            usable = []
            for c in (c for c in posts if failures([c], start, end, m.ignore)):
                why = dropped.get(str(c)) or _correct_run_failing(c, correct, ends, m.ignore)
                if why:
                    dropped[str(c)] = why
                    blocked.setdefault(row.cell_id, []).append(str(c))
                else:
                    usable.append(c)
            if usable:
                chosen = _pick(usable, row)
                checks.append(chosen)
                if row.evidence.detail.get("pinned_by") and row.evidence.detail.get("from") == chosen.value:
                    fix.pinned_by[str(chosen)] = str(row.evidence.detail["pinned_by"])
        for row in rows:
            failed = failures(checks, *ends[row.cell_id], m.ignore)
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
    if row.family == SWAP:
        return (
            "its end state lacks the task's effect only in free text or in what no written value shows "
            f"({'; '.join(row.evidence.effect_missing or [])}): no postcondition check separates it"
        )
    if row.family == OUT_OF_SCOPE:
        return (
            f"the appended write changes only records and fields the task's own run changes ({where}): "
            "no frame check separates it from a correct run"
        )
    return (
        f"differs from the reference ({where}) in no pinned value the reference writes "
        "(free text, a generated id, or a record the reference does not write): no postcondition check applies"
    )


# --- the module -------------------------------------------------------------------------------


def _comment(text: str) -> str:
    """Text for a `#` comment of the generated module: a newline in a task id would end the comment and make the
    rest of the line code, so every character that is not printable is written as its escape."""
    return repr(text)[1:-1]


def module_source(m: Manifest, repairs: Sequence[TaskRepair]) -> str:
    lines = [
        f'"""Repaired verifiers for {m.benchmark} {m.version}, written by `verimut repair`.',
        "",
        f"From the audit with manifest {m.content_hash[:16]}. Each repaired verifier is the benchmark's",
        "original verifier, called unmodified, AND the checks below for its task (frame conditions,",
        "and postconditions: a pinned value the reference writes);",
        "a task without checks keeps its original verifier. The installed package is not edited.",
        "",
        "Use: verify(adapter, task_id, episode, run, start) -> Verdict, where `adapter` is verimut's",
        "adapter for the benchmark and `start` the snapshot (adapter.snapshot) of the clean start",
        "(run_task=j grades task j's run with task_id's verifier, through the adapter's verify_as);",
        "or failures(task_id, start, end) on two snapshots, from your own grading loop.",
        '"""',
        "",
        "from verimut import repair",
        "from verimut.repair import AddedExactly, Carries, ChangesWithin, ItemsAddedExactly, RemovedExactly, Unchanged",
        "",
        "# Left out of every comparison: telemetry (reads, not effects) and fields that differ",
        "# between two replays of the same run (clock stamps, generated ids).",
        f"IGNORE = {m.ignore!r}",
        "",
        "CHECKS = {",
    ]
    for fix in repairs:
        if not fix.checks:
            continue
        caught = [c for c in fix.targets if c in fix.caught]
        lines.append(f"    # rejects {len(caught)} confirmed false accept(s): {_comment(', '.join(caught))}")
        lines.append(f"    {fix.task!r}: [")
        effect = {d.collection: len(d.added) for d in m.tasks[fix.task].effect}
        for check in fix.checks:
            if isinstance(check, AddedExactly):
                why = f"the reference run adds {effect.get(check.collection, 0)} records"
            elif isinstance(check, ItemsAddedExactly):
                why = f"the reference run adds {check.count} items to {check.field}"
            elif isinstance(check, RemovedExactly):
                why = f"the reference run removes {check.count} records (a false accept removes another)"
            elif isinstance(check, Carries):
                source = fix.pinned_by.get(str(check))
                why = f"the reference writes {check.value!r} there" + (
                    f" (pinned by {source})" if source else " (a false accept writes another value)"
                )
            else:
                why = "the reference run leaves it alone (a false accept changed it)"
            lines.append(f"        {check},  # {_comment(why)}")
        lines.append("    ],")
    lines += [
        "}",
        "",
        "",
        "def failures(task_id, start, end):",
        '    """The checks of `task_id` that fail from snapshot `start` to snapshot `end`."""',
        "    return repair.failures(CHECKS.get(task_id, []), start, end, IGNORE)",
        "",
        "",
        "def verify(adapter, task_id, episode, run, start, run_task=None):",
        '    """The original verdict AND the checks of `task_id`."""',
        "    return repair.verify(adapter, CHECKS, IGNORE, task_id, episode, run, start, run_task)",
        "",
    ]
    return "\n".join(lines)


def load_module(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"verimut_repaired_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise AuditError(f"cannot load the repair module {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# --- regrade and report -----------------------------------------------------------------------


class Regrade(msgspec.Struct):
    cell_id: str
    task: str
    family: str
    before: str  # the outcome in the audit's ledger (or the swap census's)
    after: str  # with the repaired verifier
    failed_checks: list[str] = []


class Closed(msgspec.Struct):
    """One kind of confirmed false accept, and what the repair does to it."""

    kind: str  # FAULT_ARM, SIDE_EFFECTS or SWAP_ABSENT
    false_accepts: int
    now_rejected: int
    still_accepted: list[str]


FAULT_ARM, SIDE_EFFECTS, SWAP_ABSENT = "fault arm", "side-effect families", "swap effect-absent"
CORRECT = (Outcome.CONTROL_PASS, Outcome.HARMLESS, Outcome.ALT_PASS)  # a correct run the verifier passes


class Report(msgspec.Struct):
    benchmark: str
    version: str
    manifest_hash: str
    module: str
    tasks: list[TaskRepair]
    checks: int
    false_accepts: int  # every confirmed one: the fault arm's, and the swap census's when given
    now_rejected: list[str]
    still_accepted: list[str]
    controls: int
    controls_still_passing: int
    harmless: int
    harmless_still_passing: int
    new_false_rejects: list[dict[str, Any]]  # controls, harmless cells and alternative runs the repair fails
    unchanged_elsewhere: int  # cells of tasks without checks whose outcome is the ledger's again
    regrade_mismatches: list[str]  # cells of tasks without checks whose outcome differs: nondeterminism
    by_kind: list[Closed] = []
    alternatives: int = 0  # alternative runs the original verifier passes
    alternatives_still_passing: int = 0
    alternatives_false_rejects: int = 0  # ones the original verifier already fails (the repair cannot help)
    postcondition_checks: int = 0
    swap: str | None = None  # the swap census regraded beside the audit (--swap)
    swap_outside_audit: int = 0  # its effect-absent acceptances of tasks the audit does not hold: left out

    @property
    def exit_code(self) -> int:
        return 1 if self.new_false_rejects else 0


def kind_of(family: str) -> str:
    if family == SWAP:
        return SWAP_ABSENT
    return SIDE_EFFECTS if family in SIDE_EFFECT_FAMILIES else FAULT_ARM


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


def regrade(bench: Benchmark, m: Manifest, rows: Mapping[str, CellResult], module: Any) -> list[Regrade]:
    """Every cell the audit graded (faults, side effects, alternative runs), replayed and graded again
    with the repaired verifiers, by the rule the audit used (`scorer.outcome_of`)."""
    adapter = resolve(bench)
    replayer = Replayer(adapter, {t: f.reference for t, f in m.tasks.items()})
    judge = Judge(adapter, m, replayer)
    out = []
    for cell in m.cells:
        row = rows.get(cell.cell_id)
        if row is None or row.verdict is None or cell.run is None or cell.run_task != cell.task:
            continue
        reference_end = replayer.reference_end(cell.task)  # before the cell's replay (scorer.Scorer._score: why)
        steps = replayer.reference_steps(cell.task) if is_alternative(cell.family) else []
        done = replayer.replay(cell.task, cell.run)
        compared = judge.compare(cell, done, reference_end, steps)
        verdict = module.verify(bench, cell.task, done.episode, cell.run, done.start)
        compared = judge.observe(cell, done, compared, verdict.passed)
        after = outcome_of(cell, done.failed_at is None, verdict.passed, compared)
        failed = failures(module.CHECKS.get(cell.task, []), done.start, done.end, m.ignore)
        out.append(Regrade(cell.cell_id, cell.task, cell.family, row.outcome.value, after.value, failed))
    return out


def regrade_swap(bench: Benchmark, sm: Manifest, rows: Mapping[str, CellResult], module: Any) -> list[Regrade]:
    """The swap census's effect-absent acceptances, graded again with task i's repaired verifier."""
    replayer = Replayer(resolve(bench), {t: f.reference for t, f in sm.tasks.items()})
    out = []
    for cell in sm.cells:
        row = rows.get(cell.cell_id)
        if row is None or row.outcome != Outcome.ACCEPTED_EFFECT_ABSENT or cell.run is None:
            continue
        done = replayer.replay(cell.run_task, cell.run)
        verdict = module.verify(bench, cell.task, done.episode, cell.run, done.start, cell.run_task)
        gaps = effect_missing(
            sm.tasks[cell.task], oracle.compare(done.start, done.end, sm.ignore_for(cell.task), base=done.start)
        ).gaps
        after = classify_swap(delivered=done.failed_at is None, verdict=verdict.passed, effect_present=not gaps)
        failed = failures(module.CHECKS.get(cell.task, []), done.start, done.end, sm.ignore)
        out.append(Regrade(cell.cell_id, cell.task, SWAP, row.outcome.value, after.value, failed))
    return out


CONFIRMED = (Outcome.FALSE_ACCEPT.value, Outcome.ACCEPTED_EFFECT_ABSENT.value)


def report(
    m: Manifest, repairs: list[TaskRepair], graded: list[Regrade], module: Path, swap: Path | None = None
) -> Report:
    fixed_tasks = {f.task for f in repairs if f.checks}
    fa = [g for g in graded if g.before in CONFIRMED]
    controls = [g for g in graded if g.before == Outcome.CONTROL_PASS.value]
    harmless = [g for g in graded if g.before == Outcome.HARMLESS.value]
    alternatives = [g for g in graded if g.before == Outcome.ALT_PASS.value]
    new_rejects = [
        {"cell_id": g.cell_id, "was": g.before, "now": g.after, "failed_checks": g.failed_checks}
        for g in [*controls, *harmless, *alternatives]
        if g.after != g.before
    ]
    elsewhere = [g for g in graded if g.task not in fixed_tasks and g.family != SWAP]
    kinds = [FAULT_ARM, SIDE_EFFECTS, *([SWAP_ABSENT] if swap is not None else [])]
    return Report(
        benchmark=m.benchmark,
        version=m.version,
        manifest_hash=m.content_hash,
        module=str(module),
        tasks=repairs,
        checks=sum(len(f.checks) for f in repairs),
        false_accepts=len(fa),
        now_rejected=[g.cell_id for g in fa if g.after == Outcome.REJECTED.value],
        still_accepted=[g.cell_id for g in fa if g.after != Outcome.REJECTED.value],
        controls=len(controls),
        controls_still_passing=sum(g.after == Outcome.CONTROL_PASS.value for g in controls),
        harmless=len(harmless),
        harmless_still_passing=sum(g.after == Outcome.HARMLESS.value for g in harmless),
        new_false_rejects=new_rejects,
        unchanged_elsewhere=sum(g.after == g.before for g in elsewhere),
        regrade_mismatches=[g.cell_id for g in elsewhere if g.after != g.before],
        by_kind=[
            Closed(
                k,
                len(mine := [g for g in fa if kind_of(g.family) == k]),
                sum(g.after == Outcome.REJECTED.value for g in mine),
                [g.cell_id for g in mine if g.after != Outcome.REJECTED.value],
            )
            for k in kinds
        ],
        alternatives=len(alternatives),
        alternatives_still_passing=sum(g.after == Outcome.ALT_PASS.value for g in alternatives),
        alternatives_false_rejects=sum(
            g.before == Outcome.FALSE_REJECT.value and is_alternative(g.family) for g in graded
        ),
        postcondition_checks=sum(isinstance(c, Carries) for f in repairs for c in f.checks),
        swap=None if swap is None else str(swap),
    )


def table(r: Report) -> list[tuple[str, str, str]]:
    """The before/after rows, shared by summary.md and the terminal."""
    rows = [
        (
            "confirmed false accepts",
            f"{r.false_accepts} accepted",
            f"{len(r.now_rejected)} rejected, {len(r.still_accepted)} still accepted",
        )
    ]
    rows += [
        (
            f"- {k.kind}",
            f"{k.false_accepts} accepted",
            f"{k.now_rejected} rejected, {len(k.still_accepted)} still accepted",
        )
        for k in r.by_kind
    ]
    rows += [
        ("controls (the reference runs)", f"{r.controls} pass", f"{r.controls_still_passing} pass"),
        ("harmless edits (end state = the reference's)", f"{r.harmless} pass", f"{r.harmless_still_passing} pass"),
        (
            "alternative runs (correct by another route)",
            f"{r.alternatives} pass"
            + (
                f", {r.alternatives_false_rejects} fail (the verifier's own false rejects)"
                if r.alternatives_false_rejects
                else ""
            ),
            f"{r.alternatives_still_passing} pass",
        ),
        ("new false rejects (target: none)", "", str(len(r.new_false_rejects) or "none found")),
    ]
    return rows


def still_open(r: Report) -> dict[str, str]:
    """Each confirmed false accept no check rejects, with why (the repair's honest limit)."""
    why = {cid: w for t in r.tasks for cid, w in t.unrepaired.items()}
    return {
        cid: why.get(cid, "its checks pass it on the regrade (the replay differs from the audit's)")
        for cid in r.still_accepted
    }


def markdown(r: Report) -> str:
    lines = [
        f"# verimut repair: {r.benchmark} {r.version}",
        "",
        f"Manifest `{r.manifest_hash[:16]}`; the checks are in `{Path(r.module).name}` (the original verifier AND them)."
        + (f" The swap census `{r.swap}`'s effect-absent acceptances are targets too." if r.swap else "")
        + (
            f" {r.swap_outside_audit} of them, of tasks this audit does not hold, are left out."
            if r.swap_outside_audit
            else ""
        ),
        "",
        "| | before | after the repair |",
        "|---|---|---|",
        *(f"| {a} | {b} | {c} |" for a, b, c in table(r)),
        "",
        f"{r.checks} checks ({r.postcondition_checks} postconditions) over {sum(bool(t.checks) for t in r.tasks)} tasks. "
        f"Cells of tasks without checks were graded again too: {r.unchanged_elsewhere} kept their outcome"
        + (
            f", {len(r.regrade_mismatches)} did not (nondeterminism: {', '.join(r.regrade_mismatches)})"
            if r.regrade_mismatches
            else ""
        )
        + ".",
        "",
    ]
    if r.new_false_rejects:
        lines += ["## New false rejects: correct runs the repair rejects", ""]
        lines += [
            f"- `{x['cell_id']}` ({x['was']} -> {x['now']}): {'; '.join(x['failed_checks'])}"
            for x in r.new_false_rejects
        ]
        lines.append("")
    if r.still_accepted:
        lines += ["## Still accepted: what no check closes, and why", ""]
        lines += [f"- `{cid}`: {why}" for cid, why in still_open(r).items()]
        lines.append("")
    lines += ["## Checks per task", ""]
    for t in r.tasks:
        lines.append(f"### `{t.task}`")
        lines += [f"- `{c}`" for c in t.checks] or ["- (no check applies)"]
        lines += [f"- drops `{c}`: {why}" for c, why in t.dropped.items()]
        lines += [f"- rejects `{cid}`: {'; '.join(why)}" for cid, why in t.caught.items()]
        lines += [f"- does not repair `{cid}`: {why}" for cid, why in t.unrepaired.items()]
        lines.append("")
    return "\n".join(lines)


def swap_census(m: Manifest, swap: Store) -> tuple[Manifest, dict[str, CellResult]]:
    """The swap census at `swap`, checked to be one of the audit's benchmark and version (else one line)."""
    sm = swap.read_manifest()
    if sm.arm != "swap":
        raise AuditError(
            f"--swap {swap} is not a swap census (it holds a {sm.arm}-arm audit): give `verimut swap`'s --out"
        )
    if (sm.benchmark, sm.version) != (m.benchmark, m.version):
        raise AuditError(
            f"--swap {swap} is a census of {sm.benchmark} {sm.version}; the audit is of {m.benchmark} {m.version}"
        )
    for t in set(sm.tasks) & set(m.tasks):
        if sm.tasks[t].start_digest != m.tasks[t].start_digest or sm.tasks[t].effect != m.tasks[t].effect:
            raise AuditError(f"--swap {swap} and the audit disagree on task {t}'s start or reference effect")
    return sm, dict(swap.rows())


def run(
    bench: Benchmark, m: Manifest, rows: Mapping[str, CellResult], store: Store, swap: Store | None = None
) -> Report:
    """Synthesize, write the module, regrade every cell, write the report under the audit's repair/.

    With `swap` (a swap census of the same benchmark), its effect-absent acceptances of the audit's
    tasks are targets too, and are regraded with the repaired verifiers.
    """
    if m.arm != "fault":
        raise AuditError(f"{store} holds a swap census; repair works on a fault-arm audit (verimut audit)")
    sm, srows = swap_census(m, swap) if swap is not None else (None, {})
    every_absent = [r for r in srows.values() if r.outcome == Outcome.ACCEPTED_EFFECT_ABSENT]
    absent = [r for r in every_absent if r.task in m.tasks]  # a task with no correct run here to check against
    fas = [r for r in rows.values() if r.outcome == Outcome.FALSE_ACCEPT]
    tasks = {r.task for r in [*fas, *absent]}
    # Every correct run of those tasks: a check one of them fails is dropped. An alternative run the
    # original verifier fails is correct too (the oracle confirmed it): the repair must not add to it.
    passing = [
        r
        for r in rows.values()
        if r.task in tasks
        and (r.outcome in CORRECT or (r.outcome == Outcome.FALSE_REJECT and is_alternative(r.family)))
    ]
    ends = ends_of(bench, m, [r.cell_id for r in [*fas, *passing]])
    if sm is not None:
        ends |= ends_of(bench, sm, [r.cell_id for r in absent])
    repairs = synthesize(m, ends, [*fas, *absent], passing)
    path = store.write_repair(MODULE, module_source(m, repairs))
    module = load_module(path)
    graded = regrade(bench, m, rows, module)
    if sm is not None:
        graded += regrade_swap(bench, sm, {r.cell_id: r for r in absent}, module)
    r = report(m, repairs, graded, path, None if swap is None else swap.directory)
    r.swap_outside_audit = len(every_absent) - len(absent)
    store.write_repair_summary(r, markdown(r))
    return r
