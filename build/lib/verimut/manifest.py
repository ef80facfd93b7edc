"""The manifest: every cell of an audit, fixed (and hashed) before the first is scored.

Building it replays each reference run twice (to find values that differ between
replays, which are then masked) and runs the idempotence census; then every fault
family is applied to every reference run. The result is written once, atomically.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from verimut import __version__, forms, oracle
from verimut.benchmark import Adapter, Benchmark
from verimut.census import CensusEntry, idempotence
from verimut.errors import AuditError
from verimut.faults import CONTROL, FAMILIES, USES_CENSUS, FaultContext, Refusal
from verimut.pinned import index_values, pin_source, pins
from verimut.replay import replay
from verimut.run import Run

MANIFEST = "manifest.json"


class Cell(msgspec.Struct, frozen=True):
    """One (task, family, variant) to score. `run` is None when the family refused."""

    cell_id: str
    task: str
    family: str
    variant: str
    run: Run | None
    note: str
    detail: dict[str, Any] = {}

    @property
    def is_control(self) -> bool:
        return self.family == CONTROL

    @property
    def run_task(self) -> str:
        """The task whose start the run is replayed from (another task's, in the swap census)."""
        return str(self.detail.get("run_task", self.task))


class TaskFacts(msgspec.Struct, frozen=True):
    reference: Run
    census: list[CensusEntry]
    unpinned: list[str]  # "#i.arg" of written arguments wrong-value leaves alone
    reference_error: str | None = None
    # What the reference run changes from the task's clean start (telemetry and masks left out).
    effect: list[oracle.CollectionDiff] = []
    start_digest: str = ""  # of the clean start state, to tell tasks with different starts apart
    # String values the effect writes that the task does not pin (free text, like a message
    # body the agent composes): another string there is still the requested effect.
    free_text: list[str] = []
    # The verifier's checks on the clean start (no action, empty answer): what "initially
    # failing" means for ProCredit's progress term. Empty when the verifier raised there.
    initial_checks: dict[str, bool] = {}
    # A form task's fields, on-form defaults and template values: the form families' census.
    form: forms.FormFacts | None = None

    @property
    def writes(self) -> list[str]:
        """The collections the reference run changes."""
        return [d.collection for d in self.effect]


ARMS = ("fault", "swap")


class Manifest(msgspec.Struct, frozen=True):
    verimut: str
    benchmark: str
    version: str
    provenance: dict[str, str]
    families: list[str]
    telemetry: list[str]
    masks: list[str]
    tasks: dict[str, TaskFacts]
    cells: list[Cell]
    arm: str = "fault"  # "fault": the fault grammar; "swap": the intent-swap census
    content_hash: str = ""

    @property
    def ignore(self) -> list[str]:
        return [*self.telemetry, *self.masks]


def cell_id(task: str, family: str, variant: str) -> str:
    return f"{task}:{family}" if variant == "-" else f"{task}:{family}:{variant}"


def _hash(m: Manifest) -> str:
    body = msgspec.structs.replace(m, content_hash="")
    return hashlib.sha256(msgspec.json.encode(body, order="sorted")).hexdigest()


class References(msgspec.Struct):
    """Each task's reference run, replayed twice from its clean start."""

    runs: dict[str, Run]
    outputs: dict[str, tuple[str, ...]]
    starts: dict[str, Any]
    ends: dict[str, Any]
    errors: dict[str, str | None]
    masks: list[str]


def references(bench: Benchmark, tasks: Sequence[str], tick: Callable[[str], None]) -> References:
    """Replay every reference run twice; what differs between the two replays is masked."""
    refs = References({}, {}, {}, {}, {}, [])
    masks: set[str] = set()
    for task in tasks:
        episode = bench.reset(task)
        run = bench.reference(task, episode)
        first, second = replay(bench, task, run), replay(bench, task, run)
        refs.runs[task], refs.starts[task], refs.ends[task] = run, first.start, first.end
        refs.outputs[task] = tuple(s.output for s in first.steps)
        refs.errors[task] = None if first.failed_at is None else f"#{first.failed_at}: {first.steps[-1].error}"
        a = oracle.apply_patterns(oracle.collections(first.end), bench.telemetry)
        b = oracle.apply_patterns(oracle.collections(second.end), bench.telemetry)
        masks |= oracle.find_masks(a, b)
        tick(task)
    refs.masks = sorted(masks)
    return refs


def _fault_cells(
    bench: Benchmark,
    task: str,
    refs: References,
    families: Sequence[str],
    ignore: list[str],
    form: forms.FormFacts | None = None,
) -> tuple[list[CensusEntry], list[str], list[Cell]]:
    run = refs.runs[task]
    writes = tuple(bench.is_write(a) for a in run.actions)
    wanted = refs.errors[task] is None and bool(USES_CENSUS & set(families))
    census = idempotence(bench, task, run, ignore) if wanted else []
    by_action = {e.action: e.non_idempotent for e in census}
    outputs = refs.outputs[task]
    ctx = FaultContext(
        writes=writes,
        outputs=outputs + ("",) * (len(run.actions) - len(outputs)),
        instruction=bench.instruction(task),
        values=index_values(refs.starts[task]),
        non_idempotent=tuple(by_action.get(i) for i in range(len(run.actions))),
        form=form,
    )
    unpinned = [f"#{p.action}.{p.arg}" for p in pins(run, writes, ctx.outputs, ctx.instruction) if p.source is None]
    cells = [Cell(cell_id(task, CONTROL, "-"), task, CONTROL, "-", run, "the unedited reference run")]
    for fam in families:
        result = FAMILIES[fam](run, ctx)
        if isinstance(result, Refusal):
            cells.append(Cell(cell_id(task, fam, "-"), task, fam, "-", None, result.reason))
            continue
        for edit in result:
            cells.append(
                Cell(cell_id(task, fam, edit.variant), task, fam, edit.variant, edit.run, edit.note, edit.detail)
            )
    return census, unpinned, cells


def _free_text(effect: list[oracle.CollectionDiff], instruction: str, run: Run, outputs: Sequence[str]) -> list[str]:
    reads = [(n, a.name, out) for n, (a, out) in enumerate(zip(run.actions, outputs))]
    return sorted(v for v in oracle.strings(effect) if pin_source(v, instruction, reads) is None)


def _initial_checks(bench: Benchmark, task: str) -> dict[str, bool]:
    try:
        verdict = bench.verify(bench.reset(task), Run(()))
    except Exception:  # noqa: BLE001  (a verifier that cannot grade the clean start: nothing passes there)
        return {}
    return dict(verdict.checks) if verdict.checks else {"verdict": verdict.passed}


def build(
    bench: Adapter,
    tasks: Sequence[str],
    families: Sequence[str],
    tick: Callable[[str], None] = lambda _: None,
    arm: str = "fault",
) -> Manifest:
    """Enumerate every cell. `tick` is called once per task per phase, for progress."""
    from verimut import swap  # the swap arm's grid is built from these same facts

    if arm not in ARMS:
        raise AuditError(f"unknown arm {arm!r} (known: {', '.join(ARMS)})")
    refs = references(bench, tasks, tick)
    ignore = [*bench.telemetry, *refs.masks]
    facts: dict[str, TaskFacts] = {}
    cells: list[Cell] = []
    for task in tasks:
        effect = oracle.compare(refs.starts[task], refs.ends[task], ignore)
        digest = hashlib.sha256(oracle.canonical(refs.starts[task])).hexdigest()[:16]
        census: list[CensusEntry] = []
        unpinned: list[str] = []
        form = bench.form(task) if bench.form is not None else None  # a form task's fields and defaults
        if arm == "fault":
            census, unpinned, task_cells = _fault_cells(bench, task, refs, families, ignore, form)
            cells += task_cells
        free = _free_text(effect, bench.instruction(task), refs.runs[task], refs.outputs[task])
        initial = _initial_checks(bench, task) if arm == "fault" else {}
        facts[task] = TaskFacts(
            refs.runs[task], census, unpinned, refs.errors[task], effect, digest, free, initial, form
        )
        tick(task)
    if arm == "swap":
        cells = swap.grid(facts)

    m = Manifest(
        verimut=__version__,
        benchmark=bench.name,
        version=bench.version,
        provenance=dict(bench.provenance()),
        families=list(families) if arm == "fault" else [swap.SWAP],
        telemetry=list(bench.telemetry),
        masks=refs.masks,
        tasks=facts,
        cells=cells,
        arm=arm,
    )
    return msgspec.structs.replace(m, content_hash=_hash(m))


def write(m: Manifest, out: Path) -> None:
    """Write atomically: a reader sees the old file or the whole new one, never a part."""
    out.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out, prefix=".manifest-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(msgspec.json.format(msgspec.json.encode(m, order="sorted")))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out / MANIFEST)
    except BaseException:
        # A half-written temp file would make the directory look like a stranger's next time.
        Path(tmp).unlink(missing_ok=True)
        raise


def read(out: Path) -> Manifest:
    path = out / MANIFEST
    try:
        m = msgspec.json.decode(path.read_bytes(), type=Manifest)
    except FileNotFoundError:
        raise AuditError(f"{out} is not a verimut output: it has no {MANIFEST}") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise AuditError(f"{path} is not a readable verimut manifest: {e}") from None
    if m.verimut != __version__:
        raise AuditError(
            f"{path} was written by verimut {m.verimut}, and this is {__version__}: "
            "choose another --out, or remove that directory to audit afresh"
        )
    if _hash(m) != m.content_hash:
        raise AuditError(f"{path} was modified after it was written (its content hash does not match)")
    return m
