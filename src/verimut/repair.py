"""Repair: the minimal frame-condition checks that reject an audit's confirmed false accepts.

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
  the reference leaves alone, whether or not a count rejects it too.

A check that a correct run of the task (its control, a harmless cell) fails is dropped, and
the report says which check and which run.

A false accept that differs from the reference only in values of records the reference
writes is left unrepaired and said so: that is a postcondition gap (the verifier does not
check a value), which no frame condition closes.

`write_module` writes the checks as a readable Python module that wraps the original
verifier (its verdict AND the checks); the benchmark's installed package is never edited.
`regrade` replays every cell of the audit and grades it with that module, and `report`
says what the repair rejects and whether it rejects any correct run (a new false reject).
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
from verimut.classify import classify
from verimut.errors import AuditError
from verimut.records import CellResult, Manifest, Outcome
from verimut.replay import Replayer
from verimut.run import Run
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


Check = AddedExactly | ItemsAddedExactly | Unchanged | ChangesWithin


def failures(checks: Sequence[Check], start: Any, end: Any, ignore: Sequence[str]) -> list[str]:
    """The checks that fail from snapshot `start` to snapshot `end` (telemetry and masks ignored)."""
    if not checks:
        return []
    diffs = {d.collection: d for d in oracle.compare(start, end, ignore)}
    return [why for c in checks if (why := c.fails(diffs)) is not None]


def verify(
    adapter: Benchmark,
    checks: Mapping[str, Sequence[Check]],
    ignore: Sequence[str],
    task: str,
    episode: Any,
    run: Run,
    start: Any,
) -> Verdict:
    """The original verifier's verdict AND the task's frame checks. `start`: the clean start's snapshot."""
    end = adapter.snapshot(episode)  # before the verifier, which may change the state
    original = adapter.verify(episode, run)
    mine = checks.get(task, ())
    diffs = {d.collection: d for d in oracle.compare(start, end, ignore)} if mine else {}
    failed = [why for c in mine if (why := c.fails(diffs)) is not None]
    merged = dict(original.checks) if original.checks else {"verdict": original.passed}
    merged.update({str(c): c.fails(diffs) is None for c in mine})
    detail = f"{original.detail} AND frame checks" + (f" (failed: {'; '.join(failed)})" if failed else "")
    return Verdict(original.passed and not failed, detail, merged)


# --- synthesis ------------------------------------------------------------------------------


OUT_OF_SCOPE = "extra-oos"  # the family whose false accepts are writes the task never asked for


class TaskRepair(msgspec.Struct):
    task: str
    checks: list[Check]
    targets: list[str]  # the confirmed false accepts of this task
    caught: dict[str, list[str]] = {}  # false accept -> the checks it fails
    unrepaired: dict[str, str] = {}  # false accept -> why no frame check rejects it
    dropped: dict[str, str] = {}  # check -> the correct run it would reject, and why


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
        for d in oracle.compare(start, end, m.ignore):
            if d.collection in touched and d.collection not in differs:
                continue  # the task's own change, as the reference makes it
            if d.collection not in touched:
                new: Check = Unchanged(d.collection)
            elif row.family != OUT_OF_SCOPE:
                continue  # a duplicate inside the task's own collections: the counts' business
            elif d.added and not any(isinstance(c, AddedExactly) and c.collection == d.collection for c in checks):
                new = AddedExactly(d.collection, 0)  # the reference only updates there; the run also adds
            elif d.changed:
                ref = next(e for e in effect if e.collection == d.collection)
                keys = sorted({c.key for c in ref.changed})
                new = ChangesWithin(d.collection, keys, sorted({f for c in ref.changed for f in c.fields}))
            else:
                continue
            if new not in checks:
                checks.append(new)
    return checks


def synthesize(
    m: Manifest,
    ends: Mapping[str, tuple[Any, Any]],
    false_accepts: Sequence[CellResult],
    passing: Sequence[CellResult] = (),
) -> list[TaskRepair]:
    """Checks per task, from the reference effect and each false accept's (start, end) snapshots.

    `passing`: the task's cells a repaired verifier must still pass (controls and harmless
    cells), with their snapshots in `ends` too. A check one of them fails is dropped, and said so.
    """
    by_task: dict[str, list[CellResult]] = {}
    for row in false_accepts:
        by_task.setdefault(row.task, []).append(row)
    keep: dict[str, list[CellResult]] = {}
    for row in passing:
        keep.setdefault(row.task, []).append(row)
    repairs = []
    for task, rows in by_task.items():
        checks: list[Check] = []
        dropped: dict[str, str] = {}
        for check in _candidates(m, task, rows, ends):
            rejects = [
                (r.cell_id, why) for r in keep.get(task, []) if (why := failures([check], *ends[r.cell_id], m.ignore))
            ]
            if rejects:
                cid, why = rejects[0]
                dropped[str(check)] = f"it fails the correct run {cid} ({why[0]})"
            else:
                checks.append(check)
        fix = TaskRepair(task, checks, [r.cell_id for r in rows], dropped=dropped)
        for row in rows:
            start, end = ends[row.cell_id]
            failed = failures(checks, start, end, m.ignore)
            if failed:
                fix.caught[row.cell_id] = failed
            elif dropped:
                fix.unrepaired[row.cell_id] = (
                    f"the checks that would reject it also reject a correct run, so were dropped: {', '.join(dropped)}"
                )
            elif row.family == OUT_OF_SCOPE:
                where = ", ".join(d.collection for d in row.evidence.differs_from_reference or [])
                fix.unrepaired[row.cell_id] = (
                    f"the appended write changes only records and fields the task's own run changes ({where}): "
                    "no frame check separates it from a correct run"
                )
            else:
                where = ", ".join(d.collection for d in row.evidence.differs_from_reference or [])
                fix.unrepaired[row.cell_id] = (
                    f"differs from the reference only in values of what the reference writes ({where}): "
                    "a postcondition gap (the verifier does not check that value), not a frame condition"
                )
        repairs.append(fix)
    return repairs


# --- the module -------------------------------------------------------------------------------


def module_source(m: Manifest, repairs: Sequence[TaskRepair]) -> str:
    lines = [
        f'"""Repaired verifiers for {m.benchmark} {m.version}, written by `verimut repair`.',
        "",
        f"From the audit with manifest {m.content_hash[:16]}. Each repaired verifier is the benchmark's",
        "original verifier, called unmodified, AND the frame-condition checks below for its task;",
        "a task without checks keeps its original verifier. The installed package is not edited.",
        "",
        "Use: verify(adapter, task_id, episode, run, start) -> Verdict, where `adapter` is verimut's",
        "adapter for the benchmark and `start` the snapshot (adapter.snapshot) of the clean start;",
        "or failures(task_id, start, end) on two snapshots, from your own grading loop.",
        '"""',
        "",
        "from verimut import repair",
        "from verimut.repair import AddedExactly, ChangesWithin, ItemsAddedExactly, Unchanged",
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
        lines.append(f"    # rejects {len(caught)} confirmed false accept(s): {', '.join(caught)}")
        lines.append(f"    {fix.task!r}: [")
        effect = {d.collection: len(d.added) for d in m.tasks[fix.task].effect}
        for check in fix.checks:
            if isinstance(check, AddedExactly):
                why = f"the reference run adds {effect.get(check.collection, 0)} records"
            elif isinstance(check, ItemsAddedExactly):
                why = f"the reference run adds {check.count} items to {check.field}"
            else:
                why = "the reference run leaves it alone (a false accept changed it)"
            lines.append(f"        {check},  # {why}")
        lines.append("    ],")
    lines += [
        "}",
        "",
        "",
        "def failures(task_id, start, end):",
        '    """The frame checks of `task_id` that fail from snapshot `start` to snapshot `end`."""',
        "    return repair.failures(CHECKS.get(task_id, []), start, end, IGNORE)",
        "",
        "",
        "def verify(adapter, task_id, episode, run, start):",
        '    """The original verdict AND the frame checks of `task_id`."""',
        "    return repair.verify(adapter, CHECKS, IGNORE, task_id, episode, run, start)",
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
    before: str  # the outcome in the audit's ledger
    after: str  # with the repaired verifier
    failed_checks: list[str] = []


class Report(msgspec.Struct):
    benchmark: str
    version: str
    manifest_hash: str
    module: str
    tasks: list[TaskRepair]
    checks: int
    false_accepts: int
    now_rejected: list[str]
    still_accepted: list[str]
    controls: int
    controls_still_passing: int
    harmless: int
    harmless_still_passing: int
    new_false_rejects: list[dict[str, Any]]
    unchanged_elsewhere: int  # cells of tasks without checks whose outcome is the ledger's again
    regrade_mismatches: list[str]  # cells of tasks without checks whose outcome differs: nondeterminism

    @property
    def exit_code(self) -> int:
        return 1 if self.new_false_rejects else 0


def ends_of(bench: Benchmark, m: Manifest, cell_ids: Sequence[str]) -> dict[str, tuple[Any, Any]]:
    """(start, end) snapshots of the cells, in manifest order (a run extending the reference forks its end)."""
    replayer = Replayer(resolve(bench), {t: f.reference for t, f in m.tasks.items()})
    wanted = set(cell_ids)
    out = {}
    for cell in m.cells:
        if cell.cell_id in wanted:
            assert cell.run is not None
            done = replayer.replay(cell.task, cell.run)
            out[cell.cell_id] = (done.start, done.end)
    return out


def regrade(bench: Benchmark, m: Manifest, rows: Mapping[str, CellResult], module: Any) -> list[Regrade]:
    """Every cell the audit graded, replayed and graded again with the repaired verifiers."""
    replayer = Replayer(resolve(bench), {t: f.reference for t, f in m.tasks.items()})
    out = []
    for cell in m.cells:
        row = rows.get(cell.cell_id)
        if row is None or row.verdict is None or cell.run is None or cell.family == "swap":
            continue
        done = replayer.replay(cell.task, cell.run)
        verdict = module.verify(bench, cell.task, done.episode, cell.run, done.start)
        same = not oracle.compare(replayer.reference_end(cell.task), done.end, m.ignore)
        after = classify(
            control=cell.is_control,
            refused=False,
            delivered=done.failed_at is None,
            verdict=verdict.passed,
            same_as_reference=same,
        )
        failed = failures(module.CHECKS.get(cell.task, []), done.start, done.end, m.ignore)
        out.append(Regrade(cell.cell_id, cell.task, cell.family, row.outcome.value, after.value, failed))
    return out


def report(m: Manifest, repairs: list[TaskRepair], graded: list[Regrade], module: Path) -> Report:
    fixed_tasks = {f.task for f in repairs if f.checks}
    fa = [g for g in graded if g.before == Outcome.FALSE_ACCEPT.value]
    controls = [g for g in graded if g.before == Outcome.CONTROL_PASS.value]
    harmless = [g for g in graded if g.before == Outcome.HARMLESS.value]
    new_rejects = [
        {"cell_id": g.cell_id, "was": g.before, "now": g.after, "failed_checks": g.failed_checks}
        for g in [*controls, *harmless]
        if g.after != g.before
    ]
    elsewhere = [g for g in graded if g.task not in fixed_tasks]
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
    )


def markdown(r: Report) -> str:
    lines = [
        f"# verimut repair: {r.benchmark} {r.version}",
        "",
        f"Manifest `{r.manifest_hash[:16]}`; the checks are in `{Path(r.module).name}` (the original verifier AND them).",
        "",
        "| | before | after the repair |",
        "|---|---|---|",
        f"| confirmed false accepts | {r.false_accepts} accepted | {len(r.now_rejected)} rejected, {len(r.still_accepted)} still accepted |",
        f"| controls (the reference runs) | {r.controls} pass | {r.controls_still_passing} pass |",
        f"| harmless edits (end state = the reference's) | {r.harmless} pass | {r.harmless_still_passing} pass |",
        f"| new false rejects (target: none) | | {len(r.new_false_rejects) or 'none found'} |",
        "",
        f"{r.checks} checks over {sum(bool(t.checks) for t in r.tasks)} tasks. Cells of tasks without checks were "
        f"graded again too: {r.unchanged_elsewhere} kept their outcome"
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
    lines += ["## Checks per task", ""]
    for t in r.tasks:
        lines.append(f"### `{t.task}`")
        lines += [f"- `{c}`" for c in t.checks] or ["- (no frame check applies)"]
        lines += [f"- drops `{c}`: {why}" for c, why in t.dropped.items()]
        lines += [f"- rejects `{cid}`: {'; '.join(why)}" for cid, why in t.caught.items()]
        lines += [f"- does not repair `{cid}`: {why}" for cid, why in t.unrepaired.items()]
        lines.append("")
    return "\n".join(lines)


def run(bench: Benchmark, m: Manifest, rows: Mapping[str, CellResult], store: Store) -> Report:
    """Synthesize, write the module, regrade every cell, write the report under the audit's repair/."""
    if m.arm != "fault":
        raise AuditError(f"{store} holds a swap census; repair works on a fault-arm audit (verimut audit)")
    fas = [r for r in rows.values() if r.outcome == Outcome.FALSE_ACCEPT]
    tasks = {r.task for r in fas}
    correct = (Outcome.CONTROL_PASS, Outcome.HARMLESS)
    passing = [r for r in rows.values() if r.task in tasks and r.outcome in correct]
    ends = ends_of(bench, m, [r.cell_id for r in [*fas, *passing]])
    repairs = synthesize(m, ends, fas, passing)
    path = store.write_repair(MODULE, module_source(m, repairs))
    graded = regrade(bench, m, rows, load_module(path))
    r = report(m, repairs, graded, path)
    store.write_repair_summary(r, markdown(r))
    return r
