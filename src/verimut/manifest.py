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

from verimut import __version__, oracle
from verimut.benchmark import Benchmark
from verimut.census import CensusEntry, idempotence
from verimut.errors import AuditError
from verimut.faults import CONTROL, FAMILIES, FaultContext, Refusal
from verimut.pinned import index_values, pins
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


class TaskFacts(msgspec.Struct, frozen=True):
    reference: Run
    census: list[CensusEntry]
    unpinned: list[str]  # "#i.arg" of written arguments wrong-value leaves alone
    reference_error: str | None = None


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
    content_hash: str = ""

    @property
    def ignore(self) -> list[str]:
        return [*self.telemetry, *self.masks]


def cell_id(task: str, family: str, variant: str) -> str:
    return f"{task}:{family}" if variant == "-" else f"{task}:{family}:{variant}"


def _hash(m: Manifest) -> str:
    body = msgspec.structs.replace(m, content_hash="")
    return hashlib.sha256(msgspec.json.encode(body, order="sorted")).hexdigest()


def build(
    bench: Benchmark,
    tasks: Sequence[str],
    families: Sequence[str],
    tick: Callable[[str], None] = lambda _: None,
) -> Manifest:
    """Enumerate every cell. `tick` is called once per task per phase, for progress."""
    telemetry = list(bench.telemetry)
    references: dict[str, Run] = {}
    outputs: dict[str, tuple[str, ...]] = {}
    starts: dict[str, Any] = {}
    errors: dict[str, str | None] = {}
    masks: set[str] = set()
    for task in tasks:
        episode = bench.reset(task)
        run = bench.reference(task, episode)
        first, second = replay(bench, task, run), replay(bench, task, run)
        references[task], starts[task] = run, first.start
        outputs[task] = tuple(s.output for s in first.steps)
        errors[task] = None if first.failed_at is None else f"#{first.failed_at}: {first.steps[-1].error}"
        a = oracle.apply_patterns(oracle.collections(first.end), telemetry)
        b = oracle.apply_patterns(oracle.collections(second.end), telemetry)
        masks |= oracle.find_masks(a, b)
        tick(task)
    ignore = [*telemetry, *sorted(masks)]

    facts: dict[str, TaskFacts] = {}
    cells: list[Cell] = []
    for task in tasks:
        run = references[task]
        writes = tuple(bench.is_write(a) for a in run.actions)
        census = idempotence(bench, task, run, ignore) if errors[task] is None else []
        by_action = {e.action: e.non_idempotent for e in census}
        ctx = FaultContext(
            writes=writes,
            outputs=outputs[task] + ("",) * (len(run.actions) - len(outputs[task])),
            instruction=bench.instruction(task),
            values=index_values(starts[task]),
            non_idempotent=tuple(by_action.get(i) for i in range(len(run.actions))),
        )
        unpinned = [f"#{p.action}.{p.arg}" for p in pins(run, writes, ctx.outputs, ctx.instruction) if p.source is None]
        facts[task] = TaskFacts(run, census, unpinned, errors[task])
        cells.append(Cell(cell_id(task, CONTROL, "-"), task, CONTROL, "-", run, "the unedited reference run"))
        for fam in families:
            result = FAMILIES[fam](run, ctx)
            if isinstance(result, Refusal):
                cells.append(Cell(cell_id(task, fam, "-"), task, fam, "-", None, result.reason))
                continue
            for edit in result:
                cells.append(
                    Cell(cell_id(task, fam, edit.variant), task, fam, edit.variant, edit.run, edit.note, edit.detail)
                )
        tick(task)

    m = Manifest(
        verimut=__version__,
        benchmark=bench.name,
        version=bench.version,
        provenance=dict(bench.provenance()),
        families=list(families),
        telemetry=telemetry,
        masks=sorted(masks),
        tasks=facts,
        cells=cells,
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
    if _hash(m) != m.content_hash:
        raise AuditError(f"{path} was modified after it was written (its content hash does not match)")
    return m
