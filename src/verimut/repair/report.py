"""The repair's report: repair/summary.md and summary.json (a `Report`, read back typed by `read`), the terminal's
before/after table, and the generated module repaired_verifiers.py, rendered from the typed checks.

The module wraps the original verifier (its verdict AND the checks, `checks.verify`); the benchmark's installed
package is never edited. Its use, from another grading loop: `verify(adapter, task_id, episode, run, start)` and
`failures(task_id, start, end, answer)` (docs/repair.md).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from verimut.core.errors import AuditError
from verimut.core.records import Manifest, Outcome
from verimut.engine.store import SUMMARY_JSON, Store
from verimut.findings import read_map
from verimut.grammar.faults import spec_of
from verimut.grammar.pairs import SWAP
from verimut.repair.checks import (
    CHECK_TYPES,
    TRACE_CHECKS,
    AddedExactly,
    AnswerStates,
    CallsExactly,
    CallsWith,
    Carries,
    Check,
    ItemsAddedExactly,
    RemovedExactly,
)
from verimut.repair.regrade import Regrade
from verimut.repair.synthesis import TaskRepair, checked_collections

MODULE = "repaired_verifiers.py"


class Closed(msgspec.Struct):
    """One kind of confirmed false accept, and what the repair does to it."""

    kind: str  # FAULT_ARM, SIDE_EFFECTS, ANSWERS or SWAP_ABSENT
    false_accepts: int
    now_rejected: int
    still_accepted: list[str]


FAULT_ARM, SIDE_EFFECTS, ANSWERS, SWAP_ABSENT = (
    "fault arm",
    "side-effect families",
    "answer families",
    "swap effect-absent",
)


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
    answer_checks: int = 0
    trace_checks: int = 0  # over the run's write calls (CallsExactly, CallsWith)
    swap: str | None = None  # the swap census regraded beside the audit (--swap)
    swap_outside_audit: int = 0  # its effect-absent acceptances of tasks the audit does not hold: left out
    # cell -> why the regrade could not grade it (the executor cut it: a timeout, a dead worker; the benchmark
    # raised): its `before` stands unconfirmed either way, and it counts as neither a new false reject nor a mismatch
    not_regraded: dict[str, str] = {}
    # The measured read map (docs/repair.md#repair-from-the-read-map): whether the audit recorded reads; the
    # (task, collection) pairs the checks name; of them the blind spots guarded; the collections a verifier reads
    # and its task changes that are left to it; the blind spots left out (not flipped, no false accept there).
    reads_recorded: bool = False
    collections_checked: int = 0
    blind_spots_guarded: int = 0
    left_to_verifier: int = 0
    blind_spots_unguarded: int = 0

    @property
    def exit_code(self) -> int:
        return 1 if self.new_false_rejects else 0


def kind_of(family: str) -> str:
    if family == SWAP:
        return SWAP_ABSENT
    spec = spec_of(family)
    if spec.needs_answer_channel:
        return ANSWERS
    return SIDE_EFFECTS if spec.side_effect else FAULT_ARM


def report(
    m: Manifest,
    repairs: list[TaskRepair],
    graded: list[Regrade],
    module: Path,
    swap: Path | None = None,
    reads_recorded: bool = False,
) -> Report:
    for f in repairs:
        f.kinds = [type(c).__name__ for c in f.checks]
    fixed_tasks = {f.task for f in repairs if f.checks}
    errored = {g.cell_id: g.reason or "the regrade recorded an error" for g in graded if g.after == Outcome.ERROR.value}
    fa = [g for g in graded if Outcome(g.before).is_confirmed_false_accept]
    controls = [g for g in graded if g.before == Outcome.CONTROL_PASS.value]
    harmless = [g for g in graded if g.before == Outcome.HARMLESS.value]
    alternatives = [g for g in graded if g.before == Outcome.ALT_PASS.value]
    new_rejects = [
        {"cell_id": g.cell_id, "was": g.before, "now": g.after, "failed_checks": g.failed_checks}
        for g in [*controls, *harmless, *alternatives]
        if g.after != g.before and g.cell_id not in errored
    ]
    elsewhere = [g for g in graded if g.task not in fixed_tasks and g.family != SWAP]
    answered = any(spec_of(g.family).needs_answer_channel for g in fa)
    kinds = [FAULT_ARM, SIDE_EFFECTS, *([ANSWERS] if answered else []), *([SWAP_ABSENT] if swap is not None else [])]
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
        regrade_mismatches=[g.cell_id for g in elsewhere if g.after != g.before and g.cell_id not in errored],
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
            g.before == Outcome.FALSE_REJECT.value and spec_of(g.family).is_alternative for g in graded
        ),
        postcondition_checks=sum(isinstance(c, Carries) for f in repairs for c in f.checks),
        answer_checks=sum(isinstance(c, AnswerStates) for f in repairs for c in f.checks),
        trace_checks=sum(isinstance(c, TRACE_CHECKS) for f in repairs for c in f.checks),
        swap=None if swap is None else str(swap),
        not_regraded=errored,
        reads_recorded=reads_recorded,
        collections_checked=sum(len(checked_collections(f.checks)) for f in repairs),
        blind_spots_guarded=sum(len(f.guards or []) for f in repairs),
        left_to_verifier=sum(len(f.left_to_verifier) for f in repairs),
        blind_spots_unguarded=sum(len(f.unguarded) for f in repairs),
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
    why |= {cid: f"not regraded: {w}" for cid, w in r.not_regraded.items()}
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
        f"{r.checks} checks ({r.postcondition_checks} postconditions"
        + (f", {r.answer_checks} answer checks" if r.answer_checks else "")
        + (f", {r.trace_checks} trace checks" if r.trace_checks else "")
        + f") over {sum(bool(t.checks) for t in r.tasks)} tasks. "
        f"Cells of tasks without checks were graded again too: {r.unchanged_elsewhere} kept their outcome"
        + (
            f", {len(r.regrade_mismatches)} did not (nondeterminism: {', '.join(r.regrade_mismatches)})"
            if r.regrade_mismatches
            else ""
        )
        + ".",
        "",
    ]
    lines += [*_from_map(r), ""]
    if r.new_false_rejects:
        lines += ["## New false rejects: correct runs the repair rejects", ""]
        lines += [
            f"- `{x['cell_id']}` ({x['was']} -> {x['now']}): {'; '.join(x['failed_checks'])}"
            for x in r.new_false_rejects
        ]
        lines.append("")
    if r.not_regraded:
        lines += ["## Not regraded: cells the regrade could not grade", ""]
        lines += [f"- `{cid}`: {why}" for cid, why in r.not_regraded.items()]
        lines.append("")
    if r.still_accepted:
        lines += ["## Still accepted: what no check closes, and why", ""]
        lines += [f"- `{cid}`: {why}" for cid, why in still_open(r).items()]
        lines.append("")
    lines += ["## Checks per task", ""]
    for t in r.tasks:
        lines.append(f"### `{t.task}`")
        if t.guards:
            lines.append(
                f"- from the measured read map: guards the blind spots {', '.join(f'`{c}`' for c in t.guards)}"
            )
        if t.left_to_verifier:
            lines.append(
                f"- leaves {', '.join(f'`{c}`' for c in t.left_to_verifier)} to the verifier, which reads it"
                " (no false accept differs there)"
            )
        lines += [f"- `{c}`" for c in t.checks] or ["- (no check applies)"]
        lines += [f"- drops `{c}`: {why}" for c, why in t.dropped.items()]
        lines += [f"- rejects `{cid}`: {'; '.join(why)}" for cid, why in t.caught.items()]
        lines += [f"- does not repair `{cid}`: {why}" for cid, why in t.unrepaired.items()]
        lines.append("")
    return "\n".join(lines)


def _from_map(r: Report) -> list[str]:
    """Where the frame checks come from: the measured read map, or (no reads recorded) the reference effect."""
    if not r.reads_recorded:
        return [
            (
                "No reads were recorded (the adapter has no `verify_reading`): the frame checks come from the "
                "reference run's effect and the false accepts, not from a read map."
            )
        ]
    without = [t.task for t in r.tasks if t.guards is None and t.checks]
    return [
        "## Frame checks from the measured read map",
        "",
        f"The frame checks go on what each verifier does not read (its read map, measured while it ran): they guard "
        f"{r.blind_spots_guarded} blind spots (never read on any run; confirmed by flipping, or where a false accept "
        f"lands), so a write there the audit never planted is rejected too; {r.left_to_verifier} collections a "
        "verifier reads and its task changes, where no false accept differs, are left to it (not re-checked)"
        + (
            f"; {r.blind_spots_unguarded} blind spots are left out (not flipped with no false accept there, "
            "telemetry the comparison leaves out, or a guard a correct run fails)"
            if r.blind_spots_unguarded
            else ""
        )
        + f". {r.collections_checked} (task, collection) pairs checked in all."
        + (
            f" {len(without)} tasks' verifiers have no read map (a goal contract, or no call recorded): their "
            "checks come from the reference effect, as without reads."
            if without
            else ""
        ),
    ]


def _as_stored(cls: type, field: str) -> Any:
    """`cls` with `field` (a list of untagged check structs, which msgspec cannot decode) as a list of anything."""
    fields: list[Any] = []
    for f in msgspec.structs.fields(cls):
        kind = list[Any] if f.name == field else f.type
        if f.default is not msgspec.NODEFAULT:
            fields.append((f.name, kind, f.default))
        elif f.default_factory is not msgspec.NODEFAULT:
            fields.append((f.name, kind, msgspec.field(default_factory=f.default_factory)))
        else:
            fields.append((f.name, kind))
    return msgspec.defstruct(f"Stored{cls.__name__}", fields)


_StoredReport = _as_stored(Report, "tasks")
_StoredTask = _as_stored(TaskRepair, "checks")
_KINDS: dict[str, type] = {t.__name__: t for t in CHECK_TYPES}


def read(store: Store) -> Report | None:
    """repair/summary.json as the typed record it was written from (None: no repair was run)."""
    raw = store.repair_summary()
    if raw is None:
        return None
    try:
        stored = msgspec.convert(raw, _StoredReport)
        tasks = [_task(msgspec.convert(t, _StoredTask)) for t in stored.tasks]
    except msgspec.ValidationError as e:
        where = store.repair_dir / SUMMARY_JSON
        raise AuditError(
            f"{where} is not a repair summary verimut can read ({e}): run `verimut repair` again"
        ) from None
    fields = {f: getattr(stored, f) for f in Report.__struct_fields__ if f != "tasks"}
    return Report(tasks=tasks, **fields)


def _task(t: Any) -> TaskRepair:
    if len(t.checks) != len(t.kinds) or any(k not in _KINDS for k in t.kinds):
        raise msgspec.ValidationError(f"task {t.task!r}: its checks do not say their kinds")
    checks: list[Check] = [msgspec.convert(c, _KINDS[k]) for c, k in zip(t.checks, t.kinds, strict=True)]
    fields = {f: getattr(t, f) for f in TaskRepair.__struct_fields__ if f != "checks"}
    return TaskRepair(checks=checks, **fields)


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
        "postconditions: a pinned value the reference writes; answer checks: the final answer states",
        "the reference answer's value, whole and alone; and trace checks over the run's write calls, where",
        "the state keeps no record of an effect: CallsExactly, CallsWith);",
        "a task without checks keeps its original verifier. The installed package is not edited.",
        *(
            [
                "Where the audit recorded what each verifier reads, its frame checks guard the collections it never",
                "reads (its blind spots, from the measured read map) and leave what it reads to it.",
            ]
            if any(f.guards is not None for f in repairs)
            else ["No reads were recorded: the frame checks come from the reference effect and the false accepts."]
        ),
        "",
        "Use: verify(adapter, task_id, episode, run, start) -> Verdict, where `adapter` is verimut's",
        "adapter for the benchmark and `start` the snapshot (adapter.snapshot) of the clean start",
        "(run_task=j grades task j's run with task_id's verifier, through the adapter's verify_as);",
        "or failures(task_id, start, end, answer, calls) on two snapshots, the run's final answer and its",
        "write calls (verimut Actions), from your own grading loop.",
        '"""',
        "",
        "from verimut.repair import checks",
        "from verimut.repair.checks import (",
        "    AddedExactly,",
        "    AnswerStates,",
        "    CallsExactly,",
        "    CallsWith,",
        "    Carries,",
        "    ChangesWithin,",
        "    ItemsAddedExactly,",
        "    RemovedExactly,",
        "    Unchanged,",
        ")",
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
        if fix.guards is not None:
            lines.append(
                "    # from the measured read map: guards the blind spots "
                + _comment(", ".join(fix.guards) or "(none)")
                + (
                    f"; leaves {_comment(', '.join(fix.left_to_verifier))} to the verifier"
                    if fix.left_to_verifier
                    else ""
                )
            )
        lines.append(f"    {fix.task!r}: [")
        effect = {d.collection: len(d.added) for d in m.tasks[fix.task].effect}
        for check in fix.checks:
            if isinstance(check, AddedExactly):
                why = f"the reference run adds {effect.get(check.collection, 0)} records"
            elif isinstance(check, ItemsAddedExactly):
                why = f"the reference run adds {check.count} items to {check.field}"
            elif isinstance(check, RemovedExactly):
                why = f"the reference run removes {check.count} records (a false accept removes another)"
            elif isinstance(check, AnswerStates):
                why = f"the reference answer states {check.value!r} (a false accept's answer does not, or not alone)"
            elif isinstance(check, CallsExactly):
                why = f"the reference run calls it {check.count} time(s) (a false accept calls it again)"
            elif isinstance(check, CallsWith):
                why = "the reference run's calls pass these values, which the state keeps no record of"
            elif isinstance(check, Carries):
                source = fix.pinned_by.get(str(check))
                why = f"the reference writes {check.value!r} there" + (
                    f" (pinned by {source})" if source else " (a false accept writes another value)"
                )
            elif fix.guards is not None and read_map.name_of(check.collection) in fix.guards:
                why = "a blind spot: the verifier never reads it (measured); the reference run leaves it alone"
            else:
                why = "the reference run leaves it alone (a false accept changed it)"
            lines.append(f"        {check},  # {_comment(why)}")
        lines.append("    ],")
    lines += [
        "}",
        "",
        "",
        'def failures(task_id, start, end, answer="", calls=()):',
        '    """The checks of `task_id` that fail from snapshot `start` to snapshot `end`, with final answer `answer`',
        '    and write calls `calls`."""',
        "    return checks.failures(CHECKS.get(task_id, []), start, end, IGNORE, answer, calls)",
        "",
        "",
        "def verify(adapter, task_id, episode, run, start, run_task=None):",
        '    """The original verdict AND the checks of `task_id`."""',
        "    return checks.verify(adapter, CHECKS, IGNORE, task_id, episode, run, start, run_task)",
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
