"""The pipeline's engine: choose the tasks and families, build the manifest (or check it against the stored one),
score every cell once into the ledger, controls first, and record the run.

What is made of the ledger (summaries, the report) is the findings' and outputs' (`verimut.api` puts it together).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from verimut.core.benchmark import Adapter, kind_of
from verimut.core.children import kept_for_maps
from verimut.core.errors import AuditError
from verimut.core.records import Cell, CellResult, Manifest, Outcome, RunRecord
from verimut.engine import arms
from verimut.engine import manifest as manifest_mod
from verimut.engine.arms import FAULT, Arm
from verimut.engine.declared import OwnVerdict
from verimut.engine.executor import Executor
from verimut.engine.scorer import Scorer
from verimut.engine.scoring import Scoring, Source
from verimut.engine.store import Store
from verimut.grammar.faults import CONTROL, FAMILIES, of_grammar

_T = TypeVar("_T")
_R = TypeVar("_R")


def select_tasks(all_tasks: Sequence[str], suites: Sequence[str] = (), tasks: Sequence[str] = ()) -> list[str]:
    """The tasks to audit: those named, or those of the named suites (a suite is a task-id prefix)."""
    chosen = list(all_tasks)
    if not chosen:
        raise AuditError("the benchmark lists no tasks (its tasks() is empty): there is nothing to audit")
    if suites:
        known = sorted({t.split("/", 1)[0] for t in all_tasks if "/" in t})
        for s in suites:
            if s not in known:
                raise AuditError(
                    f"unknown suite {s!r} (known: {', '.join(known) or 'none: this benchmark has no suites'})"
                )
        chosen = [t for t in chosen if t.split("/", 1)[0] in suites]
    if tasks:
        for t in tasks:
            if t not in all_tasks:
                raise AuditError(f"unknown task {t!r} (task ids look like {all_tasks[0]!r})")
        chosen = [t for t in chosen if t in tasks]
    if not chosen:
        raise AuditError("no task selected: the suites and tasks given have nothing in common")
    return chosen


def select_kinds(bench: Adapter, chosen: Sequence[str], kinds: Sequence[str] = ()) -> list[str]:
    """The chosen tasks of the named kinds (all of them when none is named).

    A kind is checked against those the benchmark has (every task is "user" when its adapter
    declares no kinds), so a misspelt one is an error rather than an empty audit.
    """
    if not kinds:
        return list(chosen)
    known = sorted({kind_of(bench, t) for t in bench.tasks()})
    for k in kinds:
        if k not in known:
            raise AuditError(f"unknown task kind {k!r} (known for {bench.name}: {', '.join(known)})")
    picked = [t for t in chosen if kind_of(bench, t) in kinds]
    if not picked:
        raise AuditError(f"no task selected: none of the suites and tasks given is of kind {', '.join(kinds)}")
    return picked


def select_families(families: Sequence[str] = (), grammar: str = "api") -> list[str]:
    """The families named, or else every family of the benchmark's grammar ("api", or "form")."""
    for f in families:
        FAMILIES.get(f)  # an unknown name is an AuditError naming the known ones
    return list(families) or of_grammar(grammar)


class Progress(Protocol):
    """What the pipeline reports its progress to (the command line's bar, cli/progress.py; or nothing)."""

    def add_task(self, description: str, *, total: int, completed: int = 0, unit: str = "cells") -> Any: ...

    def advance(self, task: Any) -> None: ...


def _differences(stored: Manifest, fresh: Manifest) -> str:
    named = [
        f
        for f in (
            "benchmark",
            "version",
            "options",
            "provenance",
            "families",
            "telemetry",
            "masks",
            "tasks",
            "cells",
            "verimut",
        )
        if getattr(stored, f) != getattr(fresh, f)
    ]
    return ", ".join(named) or "content"


class OnCores:
    """Independent work (the manifest's per task, the report's figures) on an executor's cores (`manifest.Each`)."""

    def __init__(self, executor: Executor, limit: int | None = None) -> None:
        self.executor, self.limit = executor, limit  # limit: a shared live instance (WorkArena) takes one at a time

    def __call__(self, fn: Callable[[_T], _R], items: Sequence[_T]) -> Iterable[_R]:
        return self.executor.map(fn, items, self.limit)


def prepare(
    bench: Adapter,
    store: Store,
    tasks: Sequence[str],
    families: Sequence[str],
    tick: Callable[[str], None],
    arm: Arm = FAULT,
    executor: Executor | None = None,
    aim: str | None = None,
    verdicts: dict[str, OwnVerdict] | None = None,
) -> Manifest:
    """Build the manifest (its per-task work on the executor's cores); write it, or check it against the one
    already in the store (checked by the caller). `aim`: the aimed out-of-scope search (`--aim`, oos.aimed).
    `verdicts`: filled as `manifest.build` fills it (the swap census's diagonal verdicts)."""
    each: manifest_mod.Each = manifest_mod.serially if executor is None else OnCores(executor, bench.concurrency)
    with kept_for_maps():  # a remote benchmark's workers (a browser each) serve every map of the build in turn
        fresh = manifest_mod.build(bench, tasks, families, tick, arm, each, aim, verdicts)
    if store.has_manifest():
        stored = store.read_manifest()
        if stored.content_hash != fresh.content_hash:
            raise AuditError(
                f"{store} holds an audit with a different manifest (differs in {_differences(stored, fresh)}); "
                "resume with the same options, or choose another --out"
            )
        return stored
    store.write_manifest(fresh)
    # Work from what was written (keys sorted), so a first run and a resumed one see the same data.
    return store.read_manifest()


def _blocked(
    cells: Iterable[Cell], scored: set[str], control_of: Mapping[str, str]
) -> Iterator[tuple[Cell, list[str]]]:
    """Each cell not scored yet and not a control, with the tasks whose control failed it (none: it can be scored)."""
    for c in cells:
        if c.is_control or c.cell_id in scored:
            continue
        yield c, [t for t in dict.fromkeys((c.task, c.run_task)) if control_of.get(t) != Outcome.CONTROL_PASS]


def groups(cells: Iterable[Cell]) -> list[list[Cell]]:
    """Cells that share a replay, in manifest order: a task's fault cells, or a swap column."""
    by_run: dict[str, list[Cell]] = {}
    for c in cells:
        by_run.setdefault(c.run_task, []).append(c)
    return list(by_run.values())


def streamed_groups(cells: Callable[[], Iterable[Cell]]) -> Iterable[list[Cell]]:
    """`groups` of the cells `cells()` gives, made as they are read when each run task's cells come together (as
    the manifest lists them: one pass to check, then one to read), so not every cell is held at once."""
    seen: set[str] = set()
    last: str | None = None
    for c in cells():
        if c.run_task != last:
            if c.run_task in seen:
                return groups(cells())  # a run task's cells apart: gathered whole, as before
            seen.add(c.run_task)
            last = c.run_task
    return _runs(cells())


def _runs(cells: Iterable[Cell]) -> Iterator[list[Cell]]:
    group: list[Cell] = []
    for c in cells:
        if group and c.run_task != group[0].run_task:
            yield group
            group = []
        group.append(c)
    if group:
        yield group


def score_all(
    bench: Adapter,
    m: Manifest,
    store: Store,
    executor: Executor,
    progress: Progress | None = None,
    source: Source | None = None,
    own: Mapping[str, OwnVerdict] | None = None,
) -> Mapping[str, CellResult]:
    """Score every cell not yet in the ledger, controls first. Returns the whole ledger, read once at the end.

    The executor is given a scorer factory (`Scoring`): on `bench` where cells are scored in (or forked from) this
    process; with `source` (how to load the benchmark elsewhere), in workers that load it themselves (Ray) too.

    While scoring, memory stays flat in the number of cells: a result goes to the ledger and is let go;
    only the ids scored and the controls' outcomes are kept.
    """
    # No cell is held by id, nor any row: the manifest's cells are read a pass at a time (`Packed`) and the
    # ledger's rows from the file (`Ledger`); what is kept is the ids scored and the controls' outcomes.
    scored: set[str] = set()
    control_of: dict[str, str] = {}
    recorded = store.resume()
    if recorded:
        held = sum(c.cell_id in recorded for c in m.cells)
        if held != len(recorded):
            ids = {c.cell_id for c in m.cells}
            first = next(cid for cid in recorded if cid not in ids)
            raise AuditError(f"{store.ledger_path} records cells that are not in the manifest, e.g. {first!r}")
    # A cell the machinery failed (a worker killed, a browser closed) is scored again, and so is a cell its
    # failed control blocked; every other recorded cell is done.
    lost_controls = {r.task for r in recorded.values() if r.family == CONTROL and r.lost}
    for cell in m.cells:
        row = recorded.get(cell.cell_id)
        if row is None or row.lost or (row.unscorable and {cell.task, cell.run_task} & lost_controls):
            continue
        scored.add(row.cell_id)
        if row.family == CONTROL:
            control_of[row.task] = row.outcome
    ledger = store.appender()
    factory = Scoring(m, bench, source, own)
    scorer = Scorer(bench, m)  # this process's rows of cells that are not scored (no control to compare with)
    bar = progress.add_task("scoring cells", total=len(m.cells), completed=len(scored)) if progress else None
    lost: list[str] = []  # cells of this pass the machinery failed

    def record(results: Iterable[CellResult]) -> None:
        for row in results:
            ledger.append(row)
            scored.add(row.cell_id)
            if row.family == CONTROL:
                control_of[row.task] = row.outcome
            if row.lost:
                lost.append(row.cell_id)
            elif progress is not None:
                progress.advance(bar)

    def twice(cells: Callable[[], Iterable[Cell]]) -> None:
        """Score the cells; those the machinery failed once more (on a new worker, with a new browser)."""
        lost.clear()
        record(executor.run(factory, streamed_groups(cells)))
        again_ids = set(lost)
        again = [c for c in m.cells if c.cell_id in again_ids] if again_ids else []  # (rare: one more pass)
        lost.clear()
        if again:  # (an executor given nothing may still start its workers: Ray's are cancelled unstarted)
            record(executor.run(factory, groups(again)))
        if progress is not None:
            for _ in lost:
                progress.advance(bar)

    try:
        twice(lambda: (c for c in m.cells if c.is_control and c.cell_id not in scored))
        # A cell needs a correct run to start from and a verifier that passes its own task's: the blocked ones are
        # recorded first, then the rest scored, each a pass over the cells (none of them held: `todo`).
        record(
            scorer.unscorable(c, control_of.get(failed[0], "unscored"), failed[0])
            for c, failed in _blocked(m.cells, scored, control_of)
            if failed
        )
        twice(lambda: (c for c, failed in _blocked(m.cells, scored, control_of) if not failed))
    finally:
        ledger.close()
    return store.rows()


def run(
    bench: Adapter,
    store: Store,
    arm: Arm,
    tasks: Sequence[str],
    families: Sequence[str],
    executor: Executor,
    progress: Progress | None = None,
    source: Source | None = None,
    aim: str | None = None,
) -> tuple[Manifest, Mapping[str, CellResult]]:
    """One arm into `store` (its lock held by the caller): the manifest, every cell scored, the run recorded."""
    if store.has_manifest():
        stored = store.read_manifest()
        if stored.arm != arm.name:
            other = arms.of(stored)
            raise AuditError(f"{store} holds a {other.command} run ({other.name} arm); choose another --out")
    started, began = datetime.now(UTC), time.monotonic()
    bar = progress.add_task("building manifest", total=2 * len(tasks), unit="task steps") if progress else None
    tick = lambda _: progress.advance(bar) if progress else None
    own: dict[str, OwnVerdict] = {}
    m = prepare(bench, store, tasks, families, tick, arm, executor, aim, own)
    before = len(store.rows())
    built, startup, cpu = time.monotonic(), executor.startup_seconds, _cpu()
    rows = score_all(bench, m, store, executor, progress, source, own)
    ended, cpu = time.monotonic(), _cpu() - cpu
    startup = executor.startup_seconds - startup
    store.append_run(
        RunRecord(
            started=started.isoformat(timespec="seconds"),
            wall_seconds=round(ended - began, 3),
            scored=len(rows) - before,
            arm=arm.name,
            executor=executor.name,
            manifest_seconds=round(built - began, 3),
            startup_seconds=round(startup, 3),
            scoring_seconds=round(ended - built - startup, 3),
            scoring_cpu_seconds=round(cpu, 3),
        )
    )
    return m, rows


def _cpu() -> float:
    """User and system CPU seconds of this process and of its children that have been waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
