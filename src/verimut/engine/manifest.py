"""The manifest builder: every cell of an audit, fixed (and hashed) before the first is scored.

Building it replays each reference run twice (to find values that differ between
replays, which are then masked) and runs the idempotence census; then every fault
family is applied to every reference run. The model it builds is in `records.py`;
`store.Store` writes it once, atomically.

The per-task work runs through a mapper (`Each`: the executor's `map`, so on every core) in two
passes, because the second needs what the first found across all tasks: the replays (and their
masks, which every task's diffs leave out), then each task's facts and cells. A task's work reads
only its own replays and the suite's library, so the manifest is the same whatever runs it, in
whatever order (a test builds it both ways and compares the hashes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

import msgspec

from verimut import __version__
from verimut.core import deadline, forms
from verimut.core.benchmark import GOAL, Adapter, Benchmark, contract_of, kind_of
from verimut.core.cells import manifest_hash
from verimut.core.errors import AuditError
from verimut.core.records import OPTIONS, Cell, CensusEntry, Manifest, TaskFacts, cell_id
from verimut.core.replay import passing_replay, replay
from verimut.core.run import Action, Run, Verdict
from verimut.engine import arms, blind_spots, declared
from verimut.engine.arms import FAULT, Arm
from verimut.grammar import oos
from verimut.grammar.census import idempotence
from verimut.grammar.faults import (
    CONTROL,
    FAMILIES,
    GOAL_REFUSAL,
    Borrowed,
    Edit,
    FaultContext,
    Operator,
    OutOfScope,
    Refusal,
    spec_of,
)
from verimut.grammar.pinned import index_values, pin_source, pins
from verimut.oracle import state as oracle

_T = TypeVar("_T")
_R = TypeVar("_R")


class Each(Protocol):
    """How independent work is run: fn over the items, results in the items' order (`Executor.map`, on the
    executor's cores). Used for the manifest's per-task work and the report's figures."""

    def __call__(self, fn: Callable[[_T], _R], items: Sequence[_T]) -> Iterable[_R]: ...


def serially(fn: Callable[[_T], _R], items: Sequence[_T]) -> Iterable[_R]:
    return map(fn, items)


class References(msgspec.Struct):
    """Each task's reference run, replayed twice from its clean start."""

    runs: dict[str, Run]
    outputs: dict[str, tuple[str, ...]]
    starts: dict[str, Any]
    ends: dict[str, Any]
    errors: dict[str, str | None]
    masks: list[str]
    # Declared telemetry and masks a verifier grades: pattern -> the tasks (in task order) that grade it.
    graded: dict[str, list[str]] = {}
    untested: list[str] = []  # declarations no task's check could flip (or the adapter cannot fork and patch)
    # Each task's verifier's verdict on its own reference end, where the declared-field check took one and the
    # adapter's replays do not vary (declared.OwnVerdict).
    verdicts: dict[str, Verdict] = {}


class _Replayed(msgspec.Struct):
    """One task's part of References (what a mapping process sends back)."""

    run: Run
    outputs: tuple[str, ...]
    start: Any
    end: Any
    error: str | None
    masks: list[str]
    checked: declared.Checked


def _replayed(bench: Adapter, task: str) -> _Replayed:
    episode = bench.reset(task)
    run = bench.reference(task, episode)
    # Where replays vary, a replay that ended elsewhere (a click that slipped) would mask what it missed.
    first, _ = passing_replay(bench, run, lambda: replay(bench, task, run))
    second, _ = passing_replay(bench, run, lambda: replay(bench, task, run))
    error = None if first.failed_at is None else f"#{first.failed_at}: {first.steps[-1].error}"
    a = oracle.apply_patterns(oracle.collections(first.end), bench.telemetry)
    b = oracle.apply_patterns(oracle.collections(second.end), bench.telemetry)
    masks = sorted(oracle.find_masks(a, b))
    declarations = [*bench.telemetry, *masks]
    if error is None:
        checked = declared.graded(
            bench, task, first.episode, run, first.end, declarations, masks, second.end, first.start
        )
    else:
        checked = declared.Checked(untested=declarations, error=f"its reference run raised ({error})")
    return _Replayed(run, tuple(s.output for s in first.steps), first.start, first.end, error, masks, checked)


def references(bench: Adapter, tasks: Sequence[str], tick: Callable[[str], None], each: Each = serially) -> References:
    """Replay every reference run twice; what differs between the two replays is masked. Each declared
    telemetry pattern and mask is checked on each reference end state (declared.py)."""
    refs = References({}, {}, {}, {}, {}, [])
    masks: set[str] = set()
    tested: set[str] = set()
    declarations: set[str] = set(bench.telemetry)
    for task, r in zip(tasks, each(lambda t: _replayed(bench, t), tasks), strict=True):
        refs.runs[task], refs.starts[task], refs.ends[task] = r.run, r.start, r.end
        refs.outputs[task], refs.errors[task] = r.outputs, r.error
        masks.update(r.masks)
        declarations.update(r.masks)
        for p in r.checked.graded:
            refs.graded.setdefault(p, []).append(task)
        if r.checked.verdict is not None and not bench.replays_vary:
            refs.verdicts[task] = r.checked.verdict
        if r.checked.error is None:
            tested.update(p for p in [*bench.telemetry, *r.masks] if p not in r.checked.untested)
        tick(task)
    refs.masks = sorted(masks)
    refs.untested = sorted(declarations - tested)
    return refs


def _reference(bench: Benchmark, task: str) -> Run | None:
    try:
        return bench.reference(task, bench.reset(task))
    except Exception:  # noqa: BLE001  (a task without a readable reference offers no writes)
        return None


class Library(msgspec.Struct):
    """What the audited tasks' suites offer to borrow: their writes (extra-oos) and reads (alt-reads), and the
    reads the oracle observes end states through (every distinct read of the suite; empty without `fork`)."""

    writes: dict[str, list[oos.Candidate]] | None
    reads: dict[str, list[oos.Candidate]]
    observers: dict[str, list[Action]] = {}


def _library(
    bench: Adapter, tasks: Sequence[str], refs: References, families: Sequence[str], each: Each = serially
) -> Library:
    """The library of the audited tasks' suites, from every task of those suites.

    Taken from the whole suite, not only the tasks selected, so a task's extra-oos and alt-reads
    cells are the same whichever tasks are audited with it. A task not audited costs a reset (no replay), on
    `each`'s cores: a browser's reset loads a page.
    """
    specs = [spec_of(f) for f in families]
    out_of_scope = any(s.needs_out_of_scope for s in specs)
    suite_reads = any(s.needs_suite_reads for s in specs)
    if not (out_of_scope or suite_reads) and bench.fork is None:
        return Library(None, {})
    suites = {oos.suite_of(t) for t in tasks}
    in_suites = [t for t in bench.tasks() if oos.suite_of(t) in suites]
    missing = [t for t in in_suites if refs.runs.get(t) is None]
    found = dict(zip(missing, each(lambda t: _reference(bench, t), missing), strict=True))
    runs: dict[str, Run] = {}
    for t in in_suites:
        run = refs.runs.get(t) or found.get(t)
        if run is not None:
            runs[t] = run
    is_read = {t: [bench.is_read(a) for a in r.actions] for t, r in runs.items()}
    writes = oos.library(runs, {t: [bench.is_write(a) for a in r.actions] for t, r in runs.items()})
    reads = oos.reads(runs, is_read)
    observers = oos.observers(runs, is_read) if bench.fork is not None else {}
    return Library(writes if out_of_scope else None, reads if suite_reads else {}, observers)


def _out_of_scope(
    bench: Adapter,
    task: str,
    refs: References,
    lib: dict[str, list[oos.Candidate]],
    ignore: Sequence[str],
    aim: str | None = None,
) -> tuple[tuple[OutOfScope, ...], int]:
    """The library's writes that change something outside the task's effect, and how many were tried; with `aim`,
    narrowed to what the task's confirmed blind spots leave worth planting (oos.aimed)."""
    if refs.errors[task] is not None:
        return (), 0
    run = refs.runs[task]
    effect = oracle.compare(refs.starts[task], refs.ends[task], ignore, base=refs.starts[task])
    if bench.page_writes is not None:  # a task is one page: its own elements, not other tasks' writes (oos.py)
        page = oos.on_page(task, bench.page_writes(task, run))
        kept, tried = oos.page_trial(bench, task, run, page, effect, refs.ends[task], ignore, refs.starts[task])
        return tuple(kept), tried
    # What the task's setup broke on purpose, as the changes that would undo it (adapters with `pristine`).
    undo = oracle.compare(refs.starts[task], bench.pristine(task), ignore) if bench.pristine is not None else []
    tried_here = oos.candidates(task, run, lib)
    if bench.sanctioned is not None:  # tools the task's instruction says the user accepts: within its scope
        allowed = set(bench.sanctioned(task))
        tried_here = [c for c in tried_here if c.action.name not in allowed]
    kept, tried = oos.trial(bench, task, run, tried_here, effect, refs.ends[task], ignore, refs.starts[task], undo)
    if aim is not None and kept:
        kept = oos.aimed(kept, blind_spots.confirmed(bench, task, run), aim)
    return tuple(kept), tried


# A family is pure work on one reference run: seconds at most on any real task. Past this, something runs away
# (a pattern that backtracks on a huge answer), and the audit stops naming the task rather than never ending.
FAMILY_SECONDS = 120.0


def _applied(op: Operator, run: Run, ctx: FaultContext, task: str, fam: str) -> list[Edit] | Refusal:
    try:
        with deadline.limited(FAMILY_SECONDS):
            return op(run, ctx)
    except deadline.Overrun:
        raise AuditError(
            f"task {task!r}: the {fam} family did not finish building its cells within {FAMILY_SECONDS:g} s "
            "(its reference run or answer is too large to edit); audit without it (choose tasks with --task, families with --family)"
        ) from None


def _fault_cells(
    bench: Adapter,
    task: str,
    refs: References,
    families: Sequence[str],
    ignore: list[str],
    form: forms.FormFacts | None = None,
    lib: Library | None = None,
    aim: str | None = None,
) -> tuple[list[CensusEntry], list[str], list[Cell], int]:
    lib = lib or Library(None, {})
    run = refs.runs[task]
    writes = tuple(bench.is_write(a) for a in run.actions)
    wanted = refs.errors[task] is None and any(spec_of(f).needs_census for f in families)
    census = idempotence(bench, task, run, ignore) if wanted else []
    contract = contract_of(bench, kind_of(bench, task))
    aim = aim if contract != GOAL else None  # a goal's verifier promises no frame: nothing to aim at
    out_of_scope, tried = (
        _out_of_scope(bench, task, refs, lib.writes, ignore, aim) if lib.writes is not None else ((), 0)
    )
    borrowed = tuple(
        Borrowed(c.source_task, c.source_action, c.action) for c in oos.borrowed_reads(task, run, lib.reads)
    )
    by_action = {e.action: e.non_idempotent for e in census}
    raises = {e.action for e in census if e.repeat_error is not None}
    outputs = refs.outputs[task]
    ctx = FaultContext(
        writes=writes,
        outputs=outputs + ("",) * (len(run.actions) - len(outputs)),
        instruction=bench.instruction(task),
        values=index_values(refs.starts[task]),
        non_idempotent=tuple(by_action.get(i) for i in range(len(run.actions))),
        form=form,
        out_of_scope=out_of_scope,
        out_of_scope_tried=tried,
        on_page=bench.page_writes is not None,
        repeat_raises=tuple(i in raises for i in range(len(run.actions))),
        reads=tuple(bench.is_read(a) for a in run.actions),
        other_reads=borrowed,
        contract=contract,
        targets=bench.target_args,
        channel=bench.answer_channel,
        other_answers=_other_answers(bench, task, refs),
    )
    unpinned = [f"#{p.action}.{p.arg}" for p in pins(run, writes, ctx.outputs, ctx.instruction) if p.source is None]
    # An answer-only task's findings print its prompt (a reward function's row): its control cell keeps it.
    told = {"prompt": ctx.instruction} if bench.grammar == "answer" else {}
    cells = [Cell(cell_id(task, CONTROL, "-"), task, CONTROL, "-", run, "the unedited reference run", told)]
    first: dict[bytes, str] = {oracle.canonical(run): cells[0].cell_id}
    for fam in families:
        op = FAMILIES[fam]
        result = GOAL_REFUSAL if contract == GOAL and op.spec.tests_frame else _applied(op, run, ctx, task, fam)
        if isinstance(result, Refusal):
            cells.append(Cell(cell_id(task, fam, "-"), task, fam, "-", None, result.reason))
            continue
        for edit in result:
            cid = cell_id(task, fam, edit.variant)
            # One count per distinct run: a run an earlier cell of the task already has is scored there.
            # (The null run is scored apart even when the reference is empty too: its verdict is the vacuity finding.)
            same = cid if op.spec.null_run else first.setdefault(oracle.canonical(edit.run), cid)
            cells.append(
                Cell(cid, task, fam, edit.variant, edit.run, edit.note, edit.detail, None if same == cid else same)
            )
    return census, unpinned, cells, tried


OTHER_ANSWERS = 8


def _other_answers(bench: Adapter, task: str, refs: References) -> tuple[str, ...]:
    """The answers of the suite's other audited tasks (their format's slot), the next tasks first, at most 8."""
    channel = bench.answer_channel
    if channel is None:
        return ()
    suite = [t for t in refs.runs if oos.suite_of(t) == oos.suite_of(task)]
    at = suite.index(task) if task in suite else 0
    found: list[str] = []
    for other in [*suite[at + 1 :], *suite[:at]]:
        if refs.errors.get(other) is not None:
            continue
        said = channel.read(refs.runs[other])
        inner = channel.inner(said)
        text = (said if inner is None else inner).strip()
        if text:
            found.append(text)
        if len(found) == OTHER_ANSWERS:
            break
    return tuple(found)


def _free_text(effect: list[oracle.CollectionDiff], instruction: str, run: Run, outputs: Sequence[str]) -> list[str]:
    reads = [(n, a.name, out) for n, (a, out) in enumerate(zip(run.actions, outputs))]
    return sorted(v for v in oracle.strings(effect) if pin_source(v, instruction, reads) is None)


def _initial_checks(bench: Benchmark, task: str) -> dict[str, bool]:
    try:
        verdict = bench.verify(bench.reset(task), Run(()))
    except Exception:  # noqa: BLE001  (a verifier that cannot grade the clean start: nothing passes there)
        return {}
    return dict(verdict.checks) if verdict.checks else {"verdict": verdict.passed}


class _Facts(msgspec.Struct):
    """One task's facts and cells (what a mapping process sends back)."""

    facts: TaskFacts
    cells: list[Cell]


def _facts(
    bench: Adapter,
    task: str,
    refs: References,
    ignore: list[str],
    arm: Arm,
    families: Sequence[str],
    lib: Library,
    aim: str | None = None,
) -> _Facts:
    effect = oracle.compare(refs.starts[task], refs.ends[task], ignore, base=refs.starts[task])
    # Of the start as the oracle compares it (telemetry and masks left out): a field that differs on every
    # call (a clock) must not make a rerun's manifest another one.
    digest = oracle.digest(refs.starts[task], ignore)
    census: list[CensusEntry] = []
    unpinned: list[str] = []
    cells: list[Cell] = []
    tried = 0
    form = bench.form(task) if bench.form is not None else None  # a form task's fields and defaults
    if arm.edits:
        census, unpinned, cells, tried = _fault_cells(bench, task, refs, families, ignore, form, lib, aim)
    free = _free_text(effect, bench.instruction(task), refs.runs[task], refs.outputs[task])
    initial = _initial_checks(bench, task) if arm.edits else {}
    facts = TaskFacts(
        refs.runs[task],
        census,
        unpinned,
        refs.errors[task],
        effect,
        digest,
        free,
        initial,
        form,
        out_of_scope_tried=tried,
        kind=kind_of(bench, task),
        contract=contract_of(bench, kind_of(bench, task)),
        reference_answer=bench.answer_channel.read(refs.runs[task]) if bench.answer_channel is not None else "",
        question="?" in bench.instruction(task),
    )
    return _Facts(facts, cells)


def _provenance(bench: Adapter, aim: str | None = None) -> dict[str, str]:
    """The benchmark's provenance, the options its adapter was made with (none: no entry, as before), and the aim
    of the out-of-scope search when one was taken (`--aim`; none: no entry)."""
    found = dict(bench.provenance())
    if bench.options:  # a value JSON has no type for (a Path) as its text, which a factory takes as well
        found[OPTIONS] = msgspec.json.encode(dict(bench.options), order="sorted", enc_hook=str).decode()
    if aim is not None:
        found[AIM] = aim
    return found


# The provenance entry of an aimed audit (`--aim`): how far its out-of-scope search planted.
AIM = "verimut.aim"


def aim_taken(bench: Adapter, aim: str | None) -> str | None:
    """The aim the manifest uses: `aim`, or None (a default audit's manifest) where the adapter cannot confirm a
    blind spot (blind_spots.can_confirm says why: the command line prints it)."""
    return aim if aim is not None and blind_spots.can_confirm(bench) is None else None


def build(
    bench: Adapter,
    tasks: Sequence[str],
    families: Sequence[str],
    tick: Callable[[str], None] = lambda _: None,
    arm: Arm | str = FAULT,
    each: Each = serially,
    aim: str | None = None,
    verdicts: dict[str, declared.OwnVerdict] | None = None,
) -> Manifest:
    """Enumerate every cell. `tick` is called once per task per pass, for progress; `each` runs the per-task
    work (serially by default; the audit gives its executor's map, so it runs on every core). `aim` (oos.AIMS):
    the out-of-scope search plants by the read map (oos.aimed); where the adapter cannot confirm blind spots it is
    no aim, and the manifest is the default one. `verdicts`, where given, is filled for an arm without edits (the
    swap census) with each task's declared.OwnVerdict, which that census's diagonal takes."""
    arm = arms.named(arm) if isinstance(arm, str) else arm
    aim = aim_taken(bench, aim) if arm.edits else None
    refs = references(bench, tasks, tick, each)
    telemetry, masks = list(bench.telemetry), refs.masks
    assigned = list(bench.assigned_keys)
    everywhere = [*telemetry, *masks, *(f"{glob}[{oracle.ASSIGNED}]" for glob in assigned)]

    def ignore(task: str) -> list[str]:  # a declaration a task's own verifier grades is that task's state
        return [p for p in everywhere if task not in refs.graded.get(p, ())]

    # Without edits (the swap census) nothing reads the library: not the out-of-scope writes, not the observers.
    lib = _library(bench, tasks, refs, families, each) if arm.edits else Library(None, {})
    facts: dict[str, TaskFacts] = {}
    cells: list[Cell] = []
    for task, found in zip(
        tasks, each(lambda t: _facts(bench, t, refs, ignore(t), arm, families, lib, aim), tasks), strict=True
    ):
        facts[task] = found.facts
        cells += found.cells
        tick(task)
    arm_cells = arm.cells(facts, cells)
    if bench.prepare is not None:  # its own once-per-manifest work (a reward's stability check), on every core
        bench.prepare(each)

    m = Manifest(
        verimut=__version__,
        benchmark=bench.name,
        version=bench.version,
        provenance=_provenance(bench, aim),
        families=arm.families(families),
        telemetry=telemetry,
        masks=masks,
        tasks=facts,
        cells=arm_cells,  # type: ignore[arg-type]  # the swap census's are packed (core/cells.py)
        arm=arm.name,
        graded=refs.graded,
        unchecked=refs.untested,
        observers={
            suite: lib.observers[suite] for suite in sorted({oos.suite_of(t) for t in tasks}) if suite in lib.observers
        },
        assigned_keys=assigned,
        trace_args={tool: list(args) for tool, args in sorted(bench.trace_args.items())},
    )
    if verdicts is not None and not arm.edits:
        verdicts.update(
            {t: declared.OwnVerdict(oracle.digest(refs.ends[t], ignore(t)), v) for t, v in refs.verdicts.items()}
        )
    return msgspec.structs.replace(m, content_hash=manifest_hash(arm.stored(m)))
