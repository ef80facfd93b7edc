"""Score one cell: replay it from a clean start, check the end state, call the verifier, classify."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from verimut import alternatives, oracle
from verimut.benchmark import Adapter, Verdict
from verimut.classify import classify, classify_swap
from verimut.errors import AuditError, BenchmarkCrash
from verimut.faults import is_alternative
from verimut.records import Cell, CellResult, Difference, Evidence, Manifest, Outcome, TaskFacts
from verimut.replay import Replay, Replayer
from verimut.run import Run, Step

# What scoring found so far, by `Evidence` field: gathered step by step, then made one record.
Found = dict[str, Any]


class Compared(msgspec.Struct, frozen=True):
    """A fault-arm cell's end state against the reference's: the differences, and, for an alternative
    run, why it is none (None: it is one; see alternatives.py)."""

    differs: list[oracle.CollectionDiff]
    not_alternative: str | None = None


def compare_to_reference(
    cell: Cell, reference_end: Any, reference_steps: Sequence[Step], done: Replay, ignore: list[str]
) -> Compared:
    """How the cell's end differs from its task's reference end, by the rule for its family's kind
    (`reference_steps`, what the reference run's actions returned, matter to an alternative run only).

    Shared with `repair.regrade`, so a repaired verifier's cells are judged by the very rule the audit used.
    """
    if not is_alternative(cell.family):
        return Compared(oracle.compare(reference_end, done.end, ignore))
    differs, why = alternatives.differs(cell.detail, reference_end, done.end, ignore, reference_steps, done.steps)
    return Compared(differs, why)


def outcome_of(cell: Cell, delivered: bool, verdict: bool | None, compared: Compared) -> Outcome:
    """The fixed rule for a fault-arm cell (a control, a fault, an alternative run)."""
    return classify(
        control=cell.is_control,
        refused=False,
        delivered=delivered,
        verdict=verdict,
        same_as_reference=not compared.differs and compared.not_alternative is None,
        alternative=is_alternative(cell.family),
    )


def effect_missing(facts: TaskFacts, have: list[oracle.CollectionDiff]) -> oracle.Missing:
    """What of a task's requested effect a run that changed `have` (from its start) lacks: the swap census's check."""
    return oracle.missing(have, facts.effect, facts.free_text)


class Scorer:
    """Scores cells of one manifest. Keeps each task's reference end state once computed."""

    def __init__(self, bench: Adapter, manifest: Manifest) -> None:
        self.bench = bench
        self.manifest = manifest
        self.ignore = manifest.ignore
        self.replayer = Replayer(bench, {t: f.reference for t, f in manifest.tasks.items()})
        self._reference_end: dict[str, Any] = {}
        # The adapter's one-line explanations, by (task, collections): AgentDojo's reads the verifier's
        # source, which costs more than scoring a cheap cell, and many cells of a task miss the same.
        self._explained: dict[tuple[str, tuple[str, ...]], str | None] = {}
        self._last_changed: tuple[Any, Any, list[oracle.CollectionDiff]] | None = None

    def reference_end(self, task: str) -> Any:
        if task not in self._reference_end:
            self._reference_end[task] = self.replayer.reference_end(task)
        return self._reference_end[task]

    def _row(self, cell: Cell, outcome: Outcome, verdict: bool | None, evidence: Found, **kw: Any) -> CellResult:
        return CellResult(
            cell_id=cell.cell_id,
            benchmark=self.manifest.benchmark,
            task=cell.task,
            family=cell.family,
            variant=cell.variant,
            outcome=outcome,
            verdict=verdict,
            evidence=Evidence(edit=cell.note, detail=cell.detail, **evidence),
            **kw,
        )

    def unscorable(self, cell: Cell, control_outcome: str, task: str | None = None) -> CellResult:
        whose = "the task's" if task in (None, cell.task) else f"{task}'s"
        reason = f"unscorable: {whose} control ended {control_outcome}, so there is no correct run to compare with"
        return self._row(cell, Outcome.REFUSED, None, {}, reason=reason, unscorable=True)

    def failed(self, cell: Cell, reason: str) -> CellResult:
        """A cell the executor could not finish (timed out, its worker died): an error, recorded."""
        return self._row(cell, Outcome.ERROR, None, {"executor": reason}, reason=reason)

    def score(self, cell: Cell) -> CellResult:
        began = time.perf_counter()
        try:
            row = self._score(cell)
        except BenchmarkCrash as e:  # the benchmark's own process failed: this cell's error, not the audit's
            self.replayer.forget()  # its kept episodes died with it; the next cell replays afresh
            row = self.failed(cell, str(e))
        return msgspec.structs.replace(row, seconds=round(time.perf_counter() - began, 6))

    def _score(self, cell: Cell) -> CellResult:
        if cell.run is None:
            return self._row(cell, Outcome.REFUSED, None, {}, reason=cell.note)
        if cell.run_task != cell.task:
            return self._score_swap(cell, cell.run)
        reference_end = self.reference_end(cell.task)
        alternative = is_alternative(cell.family)
        # All of the reference is at hand before the cell's replay: replaying it again afterwards (after a
        # benchmark crash dropped it) would reset, and AppWorld keeps one live world per process, so a reset
        # between the cell's replay and its verifier would close the world the verifier reads.
        reference_steps = self.replayer.reference_steps(cell.task) if alternative else []
        done = self.replayer.replay(cell.task, cell.run)
        if done.failed_at is not None:
            action = cell.run.actions[done.failed_at]
            error = f"action #{done.failed_at} {action.describe()} raised: {done.steps[-1].error}"
            if not cell.is_control:
                return self._row(cell, Outcome.INCOMPLETE, None, {"error": error}, reason=error)
        compared = compare_to_reference(cell, reference_end, reference_steps, done, self.ignore)
        vs_reference = compared.differs
        vs_start = oracle.compare(done.start, done.end, self.ignore)
        evidence: Found = {
            "differs_from_reference": [Difference.of(d) for d in vs_reference],
            "changed_from_start": {d.collection: d.counts() for d in vs_start},
        }
        if done.failed_at is not None:  # a control whose own action raised: say so beside its verdict
            evidence["error"] = error
        if alternative and not vs_reference:
            end = alternatives.as_reference_wrote(cell.detail, done.end)
            seen = oracle.compare(reference_end, end, self.manifest.masks)  # telemetry not left out
            if seen:
                evidence["telemetry_differs"] = {d.collection: d.counts() for d in seen}
        run = cell.run
        verdict = self._verdict(lambda: self.bench.verify(done.episode, run), evidence)
        if isinstance(verdict, str):
            return self._row(cell, Outcome.ERROR, None, evidence, reason=verdict)
        outcome = outcome_of(cell, done.failed_at is None, verdict.passed, compared)
        reason = None
        if alternative and outcome is Outcome.REFUSED:
            reason = f"no alternative run: {compared.not_alternative}"
        elif outcome is Outcome.FALSE_REJECT and alternative:
            reason = f"the verifier ({verdict.detail}) fails a run the oracle finds ends as the reference does"
            if "telemetry_differs" in evidence:
                what = "; ".join(f"{c}: {n}" for c, n in evidence["telemetry_differs"].items())
                reason += f", apart from telemetry it leaves out ({what})"
        elif outcome is Outcome.FALSE_ACCEPT:
            reason = self._why_missed(cell.task, [d.collection for d in vs_reference])
        elif outcome is Outcome.CONTROL_FAIL:
            reason = f"the verifier ({verdict.detail}) fails the unedited reference run"
            if not run.actions:  # e.g. AgentDojo v1.2's workspace injection tasks 6-13: ground_truth() returns []
                reason += ", which has no action (the benchmark ships an empty reference run)"
        return self._row(cell, outcome, verdict.passed, evidence, reason=reason)

    def _score_swap(self, cell: Cell, run: Run) -> CellResult:
        """Task j's run, replayed from j's start, graded by task i's verifier (i = cell.task)."""
        verify_as = self.bench.verify_as
        if verify_as is None:
            raise AuditError(
                f"{self.manifest.benchmark} cannot grade one task's run with another's verifier (no verify_as)"
            )
        done = self.replayer.replay(cell.run_task, run, in_place=True)
        evidence: Found = {"run_task": cell.run_task, "rung": cell.detail.get("rung")}
        if done.failed_at is not None:
            error = f"action #{done.failed_at} {run.actions[done.failed_at].describe()} raised: {done.steps[-1].error}"
            self._release(done)
            return self._row(cell, Outcome.INCOMPLETE, None, {**evidence, "error": error}, reason=error)
        have = self._changed(done)
        found = effect_missing(self.manifest.tasks[cell.task], have)
        gaps = found.gaps
        evidence["changed_from_start"] = {d.collection: d.counts() for d in have}
        evidence["effect_missing"] = gaps
        if found.loose:
            evidence["effect_free_text_differs"] = found.loose
        verdict = self._verdict(lambda: verify_as(cell.task, done.episode, run), evidence)
        if done.shared and not isinstance(verdict, str):
            verdict = self._left_as_it_was(cell, done, verdict)
        else:
            self._release(done)
        if isinstance(verdict, str):
            if done.shared:
                self.replayer.release()  # the next cell does not share an episode a failed verifier held
            return self._row(cell, Outcome.ERROR, None, evidence, reason=verdict)
        outcome = classify_swap(delivered=True, verdict=verdict.passed, effect_present=not gaps)
        reason = None
        if outcome is Outcome.ACCEPTED_EFFECT_ABSENT:
            reason = f"{cell.task}'s verifier passed a run whose end state lacks its requested effect: {gaps[0]}"
        return self._row(cell, outcome, verdict.passed, evidence, reason=reason)

    def _release(self, done: Replay) -> None:
        """Close a swap cell's replay that no other cell uses (a WorkArena session, replayed for this cell
        alone): a pool worker's last one would otherwise outlive the worker, which runs no exit hook."""
        if not done.shared and self.bench.fork is None and self.bench.close is not None:
            self.bench.close(done.episode)

    def _left_as_it_was(self, cell: Cell, done: Replay, verdict: Verdict) -> Verdict | str:
        """A verdict given in a shared episode counts only if the verifier changed nothing the next one reads."""
        moved = oracle.compare(done.end, self.bench.snapshot(done.episode), [])
        if not moved:
            return verdict
        what = "; ".join(f"{d.collection}: {d.counts()}" for d in moved)
        return f"{cell.task}'s verifier changed the episode it graded in place ({what}), so its verdict is not recorded"

    def close(self) -> None:
        """Release the episodes kept for later cells: the worker scoring with this scorer is done."""
        self.replayer.release()

    def _changed(self, done: Replay) -> list[oracle.CollectionDiff]:
        """What a swap column's run changed from its start. With a forking adapter every cell of the column
        shares the kept start and end snapshots, so the diff is computed once per column, not per cell."""
        last = self._last_changed
        if last is not None and last[0] is done.start and last[1] is done.end:
            return last[2]
        have = oracle.compare(done.start, done.end, self.ignore)
        self._last_changed = (done.start, done.end, have)
        return have

    @staticmethod
    def _verdict(call: Callable[[], Verdict], evidence: Found) -> Verdict | str:
        """Call the verifier; record what it said in `evidence`. A string is why it raised."""
        try:
            verdict = call()
        except BenchmarkCrash:
            raise  # the benchmark's process failed, not its verifier: recorded by `score`
        except Exception as e:  # noqa: BLE001  (the verifier is the benchmark's code: any exception is its error)
            evidence["traceback"] = traceback.format_exc(limit=5)
            return f"verifier raised {type(e).__name__}: {e}"
        evidence["verifier"] = verdict.detail
        if verdict.checks:
            evidence["checks"] = verdict.checks
        return verdict

    def _why_missed(self, task: str, collections: list[str]) -> str | None:
        explain = self.bench.explain
        if explain is None:
            return None
        key = (task, tuple(collections))
        if key not in self._explained:
            self._explained[key] = explain(task, collections)
        return self._explained[key]
