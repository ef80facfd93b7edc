"""The pipeline: enumerate cells into a manifest, score each once into the ledger, summarize.

Data flows one way: adapter -> manifest (fault grammar, census, masks) -> executor
(replay, end-state check, verifier call, classification) -> ledger -> summary and report.html.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
from rich.text import Text

from verimut import manifest as manifest_mod
from verimut import report_html, rewards
from verimut import summary as summary_mod
from verimut import swap as swap_mod
from verimut.benchmark import USER, Adapter, kind_of
from verimut.cell_view import Terminal
from verimut.errors import AuditError
from verimut.executor import Executor, InProcess
from verimut.faults import CONTROL, FAMILIES, of_grammar
from verimut.records import Cell, CellResult, Manifest, Outcome, RunRecord
from verimut.scorer import Scorer
from verimut.store import Store

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


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        unit = task.fields.get("unit", "cells")
        return Text(f"{speed:.1f} {unit}/s" if speed else "", style="cyan")


def _progress(console: Console, quiet: bool) -> Any:
    if quiet:
        return nullcontext(None)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


def _differences(stored: Manifest, fresh: Manifest) -> str:
    named = [
        f
        for f in ("benchmark", "version", "provenance", "families", "telemetry", "masks", "tasks", "cells", "verimut")
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
    arm: str = "fault",
    executor: Executor | None = None,
) -> Manifest:
    """Build the manifest (its per-task work on the executor's cores); write it, or check it against the one
    already in the store (checked by the caller)."""
    each = OnCores(executor or InProcess(), bench.concurrency)
    fresh = manifest_mod.build(bench, tasks, families, tick, arm, each)
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


def groups(cells: Iterable[Cell]) -> list[list[Cell]]:
    """Cells that share a replay, in manifest order: a task's fault cells, or a swap column."""
    by_run: dict[str, list[Cell]] = {}
    for c in cells:
        by_run.setdefault(c.run_task, []).append(c)
    return list(by_run.values())


def score_all(
    bench: Adapter,
    m: Manifest,
    store: Store,
    executor: Executor,
    progress: Any = None,
) -> dict[str, CellResult]:
    """Score every cell not yet in the ledger, controls first. Returns the whole ledger, read once at the end.

    While scoring, memory stays flat in the number of cells: a result goes to the ledger and is let go;
    only the ids scored and the controls' outcomes are kept.
    """
    known = {c.cell_id for c in m.cells}
    scored: set[str] = set()
    control_of: dict[str, str] = {}
    for row in store.resume().values():
        if row.cell_id not in known:
            raise AuditError(f"{store.ledger_path} records cells that are not in the manifest, e.g. {row.cell_id!r}")
        scored.add(row.cell_id)
        if row.family == CONTROL:
            control_of[row.task] = row.outcome
    ledger = store.appender()
    scorer = Scorer(bench, m)
    bar = progress.add_task("scoring cells", total=len(m.cells), completed=len(scored)) if progress else None

    def record(results: Iterable[CellResult]) -> None:
        for row in results:
            ledger.append(row)
            scored.add(row.cell_id)
            if row.family == CONTROL:
                control_of[row.task] = row.outcome
            if bar is not None:
                progress.advance(bar)

    try:
        controls = [c for c in m.cells if c.is_control and c.cell_id not in scored]
        record(executor.run(scorer, groups(controls)))
        todo: list[Cell] = []
        blocked: list[CellResult] = []
        for c in m.cells:
            if c.is_control or c.cell_id in scored:
                continue
            # A cell needs a correct run to start from and a verifier that passes its own task's.
            failed = [t for t in dict.fromkeys((c.task, c.run_task)) if control_of.get(t) != Outcome.CONTROL_PASS]
            if failed:
                blocked.append(scorer.unscorable(c, control_of.get(failed[0], "unscored"), failed[0]))
            else:
                todo.append(c)
        record(blocked)
        record(executor.run(scorer, groups(todo)))
    finally:
        ledger.close()
    return store.rows()


def summarize(
    m: Manifest,
    rows: dict[str, CellResult],
    store: Store,
    c: float = rewards.DEFAULT_C,
    each: manifest_mod.Each = manifest_mod.serially,
) -> summary_mod.Summary | swap_mod.Census:
    """Write summary.md/json, report.html (and, for the fault arm, rewards.json) for the manifest's arm.
    `each` draws the report's figures (most of its time): on an executor's cores with `OnCores`."""
    result: summary_mod.Summary | swap_mod.Census
    result = swap_mod.write(m, rows, store) if m.arm == swap_mod.SWAP else summary_mod.write(m, rows, store, c)
    report_html.write(store, m, rows, result, each)
    return result


def _run(
    bench: Adapter,
    out: Path,
    arm: str,
    tasks: Sequence[str],
    families: Sequence[str],
    executor: Executor | None,
    console: Console | None,
    quiet: bool,
) -> summary_mod.Summary | swap_mod.Census:
    console = console or Terminal(stderr=True)  # the progress bar's text never drives the terminal
    store = Store(out)
    store.check_usable()
    with store.lock():
        if store.has_manifest():
            stored = store.read_manifest()
            if stored.arm != arm:
                other = "verimut swap" if stored.arm == swap_mod.SWAP else "verimut audit"
                raise AuditError(f"{out} holds a {other} run ({stored.arm} arm); choose another --out")
        started, began = datetime.now(UTC), time.monotonic()
        executor = executor or InProcess()
        with _progress(console, quiet) as progress:
            bar = progress.add_task("building manifest", total=2 * len(tasks), unit="task steps") if progress else None
            tick = lambda _: progress.advance(bar) if progress else None
            m = prepare(bench, store, tasks, families, tick, arm, executor)
            before = len(store.rows())
            built, startup = time.monotonic(), executor.startup_seconds
            rows = score_all(bench, m, store, executor, progress)
        ended = time.monotonic()
        startup = executor.startup_seconds - startup
        store.append_run(
            RunRecord(
                started=started.isoformat(timespec="seconds"),
                wall_seconds=round(ended - began, 3),
                scored=len(rows) - before,
                arm=arm,
                executor=executor.name,
                manifest_seconds=round(built - began, 3),
                startup_seconds=round(startup, 3),
                scoring_seconds=round(ended - built - startup, 3),
            )
        )
        return summarize(m, rows, store, each=OnCores(executor))


def swap(
    bench: Adapter,
    out: Path,
    *,
    suites: Sequence[str] = (),
    tasks: Sequence[str] = (),
    executor: Executor | None = None,
    console: Console | None = None,
    quiet: bool = False,
) -> swap_mod.Census:
    """The intent-swap census of the chosen user tasks (pairs are formed within each suite).

    Only "user" tasks are paired: another kind's verifier (AgentDojo's `security`) asks whether an
    attack succeeded, not whether a user's request was done, so a swapped pass means nothing.
    """
    if bench.verify_as is None:
        raise AuditError(
            f"{bench.name} cannot run the intent-swap census: its adapter has no verify_as(task, episode, run)"
        )
    if not suites and not tasks:
        suites = bench.swap_suites  # the adapter's default (WorkArena: once-after-submit only)
    chosen = select_tasks(bench.tasks(), suites, tasks)
    if bench.kind is not None:
        users = [t for t in chosen if kind_of(bench, t) == USER]
        if not users:
            raise AuditError("no task selected: the intent-swap census pairs user tasks only")
        chosen = users
    result = _run(bench, out, swap_mod.SWAP, chosen, (), executor, console, quiet)
    assert isinstance(result, swap_mod.Census)
    return result


def audit(
    bench: Adapter,
    out: Path,
    *,
    suites: Sequence[str] = (),
    tasks: Sequence[str] = (),
    families: Sequence[str] = (),
    kinds: Sequence[str] = (),
    executor: Executor | None = None,
    console: Console | None = None,
    quiet: bool = False,
) -> summary_mod.Summary:
    chosen = select_kinds(bench, select_tasks(bench.tasks(), suites, tasks), kinds)
    fams = select_families(families, bench.grammar)
    result = _run(bench, out, "fault", chosen, fams, executor, console, quiet)
    assert isinstance(result, summary_mod.Summary)
    return result
