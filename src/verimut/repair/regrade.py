"""The regrade: every cell the audit graded, scored again through the Scorer and an executor, with the repaired
verifiers (the original verdict AND the task's checks), like any audit: per-cell timeouts, a benchmark crash
recorded on its cell, in parallel.

`RepairedScoring` is the scorer factory: the audit's manifest, and the checks as data, so it pickles (a Ray actor
loads the adapter itself). Its scorer is the audit's `Scorer` on the adapter with its verifiers repaired
(`_Repaired`), so a repaired verifier's cells are judged by the very rule the audit used. Each result carries the
checks that failed, with why (`Regraded`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from verimut.core.benchmark import Adapter, Verdict
from verimut.core.records import Cell, CellResult, Manifest, Outcome
from verimut.core.run import Run
from verimut.engine.executor import Executor, Scores
from verimut.engine.scorer import Scorer
from verimut.engine.scoring import Scoring, Source
from verimut.grammar.pairs import SWAP
from verimut.repair import checks as checks_mod
from verimut.repair.checks import Check


class Regrade(msgspec.Struct):
    cell_id: str
    task: str
    family: str
    before: str  # the outcome in the audit's ledger (or the swap census's)
    after: str  # with the repaired verifier
    failed_checks: list[str] = []
    reason: str | None = None  # an `error` after: why (the executor cut it, the benchmark raised)


class Regraded(CellResult, frozen=True):
    """A cell scored with the repaired verifier, and why its checks failed (each check's own words)."""

    failed_checks: list[str] = msgspec.field(default_factory=list)


class _Grading:
    """What the repaired verifier of one process needs besides the episode: the cell being scored (its task, and
    the task whose run it holds) and each task's clean start, as its reset showed it."""

    def __init__(self, original: Adapter, checks: Mapping[str, Sequence[Check]], ignore: Sequence[str]) -> None:
        self.original, self.checks, self.ignore = original, checks, ignore
        self.starts: dict[str, Any] = {}
        self.cell: Cell | None = None
        self.failed: list[str] = []

    def verdict(self, task: str, episode: Any, run: Run, run_task: str | None) -> Verdict:
        assert self.cell is not None
        start = self.starts[self.cell.run_task]
        verdict, self.failed = checks_mod.graded(
            self.original, self.checks, self.ignore, task, episode, run, start, run_task
        )
        return verdict


@dataclass(frozen=True)
class _Repaired(Adapter):
    """The adapter with its verifiers repaired: `verify` and `verify_as` are the original's AND the checks."""

    grading: Any = None

    def reset(self, task: str) -> Any:
        episode = super().reset(task)
        if task not in self.grading.starts:  # the clean start the checks diff from, as the replays see it
            self.grading.starts[task] = self.snapshot(episode)
        return episode

    def verify(self, episode: Any, run: Run) -> Verdict:
        g = self.grading
        return g.verdict(g.cell.task, episode, run, None)


def repaired(adapter: Adapter, grading: _Grading) -> _Repaired:
    fields = {f.name: getattr(adapter, f.name) for f in dataclasses.fields(Adapter)}
    if adapter.verify_as is not None:

        def verify_as(task: str, episode: Any, run: Run) -> Verdict:
            assert grading.cell is not None
            return grading.verdict(task, episode, run, grading.cell.run_task)

        fields["verify_as"] = verify_as
    # The regrade grades through the repaired `verify`; recording reads would call the unrepaired verifier.
    fields["verify_reading"] = None
    return _Repaired(**fields, grading=grading)


class _Regrader:
    """A `Scores`: the audit's scorer on the repaired adapter, its rows with the failed checks' reasons."""

    def __init__(self, scorer: Scorer, grading: _Grading) -> None:
        self.scorer, self.grading = scorer, grading

    def score(self, cell: Cell) -> CellResult:
        self.grading.cell, self.grading.failed = cell, []
        row = self.scorer.score(cell)
        return Regraded(**msgspec.structs.asdict(row), failed_checks=self.grading.failed)

    def failed(self, cell: Cell, reason: str) -> CellResult:
        return Regraded(**msgspec.structs.asdict(self.scorer.failed(cell, reason)))

    def close(self) -> None:
        self.scorer.close()


class RepairedScoring(Scoring):
    """The scorer factory of the regrade: the manifest's cells graded with the repaired verifiers. Picklable with a
    `source` (the checks are data)."""

    def __init__(
        self,
        manifest: Manifest,
        checks: Mapping[str, Sequence[Check]],
        ignore: Sequence[str],
        adapter: Adapter | None = None,
        source: Source | None = None,
    ) -> None:
        super().__init__(manifest, adapter, source)
        self.checks = {t: list(c) for t, c in checks.items()}
        self.ignore = list(ignore)

    def build(self, adapter: Adapter) -> Scores:
        grading = _Grading(adapter, self.checks, self.ignore)
        return _Regrader(Scorer(repaired(adapter, grading), self.manifest), grading)


def _groups(cells: Iterable[Cell]) -> list[list[Cell]]:
    """Cells that share a replay, in manifest order (a task's cells, a swap column)."""
    by_run: dict[str, list[Cell]] = {}
    for c in cells:
        by_run.setdefault(c.run_task, []).append(c)
    return list(by_run.values())


def _graded(
    executor: Executor, factory: RepairedScoring, cells: list[Cell], rows: Mapping[str, CellResult], family: str = ""
) -> list[Regrade]:
    order = {c.cell_id: i for i, c in enumerate(cells)}
    out = []
    for result in executor.run(factory, _groups(cells)):
        before = rows[result.cell_id]
        failed = result.failed_checks if isinstance(result, Regraded) else []
        reason = result.reason if result.outcome == Outcome.ERROR else None
        out.append(
            Regrade(
                result.cell_id,
                result.task,
                family or result.family,
                before.outcome.value,
                result.outcome.value,
                failed,
                reason,
            )
        )
    return sorted(out, key=lambda g: order[g.cell_id])


def regrade(
    bench: Adapter,
    m: Manifest,
    rows: Mapping[str, CellResult],
    checks: Mapping[str, Sequence[Check]],
    executor: Executor,
    source: Source | None = None,
) -> list[Regrade]:
    """Every cell the audit graded (faults, side effects, alternative runs), scored again with the repaired
    verifiers on `executor`, by the rule the audit used (the Scorer)."""
    cells = [
        c
        for c in m.cells
        if (row := rows.get(c.cell_id)) is not None
        and row.verdict is not None
        and c.run is not None
        and c.run_task == c.task
    ]
    return _graded(executor, RepairedScoring(m, checks, m.ignore, bench, source), cells, rows)


def regrade_swap(
    bench: Adapter,
    sm: Manifest,
    rows: Mapping[str, CellResult],
    checks: Mapping[str, Sequence[Check]],
    ignore: Sequence[str],
    executor: Executor,
    source: Source | None = None,
) -> list[Regrade]:
    """The swap census's effect-absent acceptances, graded again with task i's repaired verifier."""
    cells = [
        c
        for c in sm.cells
        if (row := rows.get(c.cell_id)) is not None and row.outcome == Outcome.ACCEPTED_EFFECT_ABSENT and c.run
    ]
    return _graded(executor, RepairedScoring(sm, checks, ignore, bench, source), cells, rows, SWAP)
