"""Score one cell: replay it from a clean start, check the end state, call the verifier, classify."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple, TypeVar, cast

import msgspec

from verimut.core import reads as read_sets
from verimut.core.benchmark import Adapter, Verdict
from verimut.core.errors import AuditError, BenchmarkCrash, InfrastructureError, Machinery
from verimut.core.guard import VerdictError
from verimut.core.reads import Reads
from verimut.core.records import Cell, CellResult, Difference, Evidence, Manifest, Outcome, TaskFacts, bounded
from verimut.core.replay import REPLAY_TRIES, Replay, Replayer, passing_replay
from verimut.core.run import Action, Run, Step
from verimut.engine import arms, blind_spots
from verimut.engine.classify import classify, classify_swap
from verimut.engine.declared import OwnVerdict
from verimut.grammar import alternatives, answers, oos
from verimut.grammar.faults import spec_of
from verimut.oracle import state as oracle

T = TypeVar("T")


def _capped(value: T) -> T:
    """`records.bounded`: each string in `value` longer than records.CAP cut to a prefix, its length and its
    hash (a string stays a string, a list a list), so one huge value cannot swell the ledger."""
    return cast(T, bounded(value))


def _noted(cell: Cell) -> Evidence:
    """The evidence every row records: the cell's edit and detail (nothing scored)."""
    return Evidence(edit=cell.note, detail=_capped(cell.detail))


class Heard(NamedTuple):
    """What calling a verifier gave: its verdict, or why there is none (and the traceback when it raised)."""

    verdict: Verdict | None = None
    why: str | None = None
    traceback: str | None = None


class Compared(msgspec.Struct, frozen=True):
    """A fault-arm cell's end state against the reference's: the differences, and, for an alternative
    run, why it is none (None: it is one; see alternatives.py). The rest says how the benchmark itself sees
    the two ends (docs/method.md#observable-effects):

    - `trace`: write calls that differ in arguments the state keeps no record of (an effect on its own);
    - `trace_graded`: the task's verifier grades the calls, and the two runs' writes differ;
    - `unobserved_through`: a raw difference that none of the suite's N reads reveals;
    - `observed_by`: a read that returns other data on the two ends (when the state diff is empty).
    """

    differs: list[oracle.CollectionDiff]
    not_alternative: str | None = None
    trace: list[str] = []
    trace_graded: bool = False
    unobserved_through: int | None = None
    observed_by: str | None = None
    answer: str | None = None  # an answer fault's answer is not the reference's: why (answers.confirm)

    @property
    def same(self) -> bool:
        """The same effect and the same answer: equal states, equal trace effects, no observer that tells them
        apart, and (an answer fault) an answer the oracle does not find wrong."""
        return (
            not self.differs
            and not self.trace
            and self.not_alternative is None
            and not self.obscure
            and self.answer is None
        )

    @property
    def obscure(self) -> bool:
        """Not the reference's end, yet nothing the benchmark observes differs in an effect (classify.py)."""
        if self.trace:
            return False
        if self.differs:
            return self.unobserved_through is not None
        return self.trace_graded or self.observed_by is not None


class Judge:
    """How a fault-arm cell's end compares with its task's reference end, by every rule the oracle has:
    the state diff, the trace, and the suite's reads where the diff alone would decide a finding.

    Shared with `repair.regrade`, so a repaired verifier's cells are judged by the very rule the audit used.
    """

    def __init__(self, bench: Adapter, manifest: Manifest, replayer: Replayer) -> None:
        self.bench = bench
        self.manifest = manifest
        self.replayer = replayer
        self.trace_args = manifest.trace_args
        self._observers: dict[str, _Observer] = {}

    def compare(self, cell: Cell, done: Replay, reference_end: Any, reference_steps: Sequence[Step]) -> Compared:
        """The state diff and the trace. The reference's end and steps are fetched before the cell's replay
        (an adapter that holds one live episode ends it at the next reset: `Scorer._score`)."""
        reference = self.manifest.tasks[cell.task].reference
        run = cell.run
        assert run is not None
        detail = cell.detail if spec_of(cell.family).is_alternative else {}
        writes = [
            Action(a.name, alternatives.as_reference_wrote(detail, dict(a.args)))
            for a in run.actions
            if self.bench.is_write(a)
        ]
        wanted = [a for a in reference.actions if self.bench.is_write(a)]
        trace = oracle.trace_differs(wanted, writes, self.trace_args) if self.trace_args else []
        reads_trace = self.bench.reads_trace
        # Whether the verifier reads the trace is asked only of runs whose writes differ (it costs a replay of the
        # task's reference the first time; a control's writes never differ).
        graded = reads_trace is not None and oracle.writes_differ(wanted, writes) and reads_trace(cell.task)
        if graded and self.bench.idle_writes is not None:  # leaving out a call that changed nothing: state decides
            idle = [reference.actions[i] for i in self.bench.idle_writes(cell.task)]
            graded = not oracle.only_left_out(wanted, writes, idle)
        spec = spec_of(cell.family)
        if not spec.is_alternative:
            differs = oracle.compare(reference_end, done.end, self.manifest.ignore_for(cell.task), base=done.start)
            said = None
            if spec.needs_answer_channel and self.bench.answer_channel is not None:
                edited = self.bench.answer_channel.read(run)
                said = answers.confirm(cell.detail, self.manifest.tasks[cell.task].reference_answer, edited)
            return Compared(differs, trace=trace, trace_graded=graded, answer=said)
        differs, why = alternatives.differs(
            cell.detail,
            reference_end,
            done.end,
            self.manifest.ignore_for(cell.task),
            reference_steps,
            done.steps,
            base=done.start,
        )
        if why is None and trace:
            why = f"its calls differ where the state keeps no record of them: it {trace[0]}"
        elif why is None and graded:
            why = "the task's verifier grades the run's calls, and this run's writes differ from the reference's"
        return Compared(differs, why, trace, graded)

    def observe(self, cell: Cell, done: Replay, compared: Compared, passed: bool) -> Compared:
        """`compared`, with the suite's reads run on both ends where they could change the finding: a fault
        whose state differs and passed (is the difference observable?), and a failed run whose state does
        not differ (do the reads tell it apart?). Without `fork` or reads, `compared` as it is."""
        alternative = spec_of(cell.family).is_alternative
        if compared.trace or compared.not_alternative is not None or compared.answer:
            return compared
        # A verifier that grades the calls and passed a run whose writes differ did not tell the two apart by
        # them (a repeated call): only the suite's reads can, as on any task (docs/method.md#observable-effects).
        if compared.trace_graded and not passed:
            return compared
        if spec_of(cell.family).null_run:
            return compared  # its verdict is its outcome (vacuous or rejected): what a read shows changes neither
        if compared.differs and (alternative or not passed):
            return compared
        if not compared.differs and passed:
            return compared
        observer = self._observer(cell.task)
        if observer is None:
            return compared
        episode = done.episode
        if self.bench.snapshot(episode) != done.end:  # the verifier changed what it graded: replay afresh
            assert cell.run is not None
            episode = self.replayer.replay(cell.task, cell.run).episode
        detail = cell.detail if alternative else {}
        found = observer.differs_on(episode, lambda out: alternatives.as_reference_wrote(detail, out))
        if not isinstance(found, int):
            return compared if compared.differs else msgspec.structs.replace(compared, observed_by=found)
        if not compared.differs:
            return compared
        # The reads returned the same on both ends. That says "not observable" only if they show what differs
        # (each differing record's values all in one read's output): a record no read of the suite lists
        # (a sent email, when no task reads the sent folder) is unseen, not unobservable, and stays a difference.
        if not oracle.shown(compared.differs, observer.outputs):
            return compared
        return msgspec.structs.replace(compared, unobserved_through=found)

    def _observer(self, task: str) -> _Observer | None:
        fork = self.bench.fork
        reads = self.manifest.observers.get(oos.suite_of(task))
        if fork is None or not reads:
            return None
        if task not in self._observers:
            episode = self.replayer.reference_episode(task)
            if episode is None:
                return None
            self._observers = {task: _Observer(self.bench, fork(episode), reads)}  # one task's at a time
        return self._observers[task]


class _Observer:
    """The suite's reads, run in order on a fork of one task's reference end; their outputs kept, computed
    only as far as a comparison needs them (most differences show at the first, list-everything read)."""

    def __init__(self, bench: Adapter, episode: Any, reads: Sequence[Action]) -> None:
        self.bench = bench
        self.episode = episode
        self.reads = reads
        self.outputs: list[str] = []

    def _output(self, i: int) -> str:
        while len(self.outputs) <= i:
            step = self.bench.execute(self.episode, self.reads[len(self.outputs)])
            self.outputs.append(step.output if step.error is None else f"raised: {step.error}")
        return self.outputs[i]

    def differs_on(self, episode: Any, restore: Callable[[str], Any]) -> int | str:
        """The first read that returns other data on a fork of `episode`, described; else how many were run."""
        assert self.bench.fork is not None
        copy = self.bench.fork(episode)
        for i, action in enumerate(self.reads):
            step = self.bench.execute(copy, action)
            out = step.output if step.error is None else f"raised: {step.error}"
            if restore(out) != self._output(i):
                return action.describe()
        return len(self.reads)


def outcome_of(
    cell: Cell, delivered: bool, verdict: bool | None, compared: Compared, nothing_to_do: bool = False
) -> Outcome:
    """The fixed rule for a fault-arm cell (a control, a fault, an alternative run). `nothing_to_do`: the task's
    `TaskFacts.does_nothing`."""
    return classify(
        control=cell.is_control,
        refused=False,
        delivered=delivered,
        verdict=verdict,
        same_as_reference=compared.same,
        alternative=spec_of(cell.family).is_alternative,
        obscure=compared.obscure,
        weak_pin="weak_pin" in cell.detail,
        null_run=spec_of(cell.family).null_run,
        nothing_to_do=nothing_to_do,
    )


def effect_missing(facts: TaskFacts, have: list[oracle.CollectionDiff]) -> oracle.Missing:
    """What of a task's requested effect a run that changed `have` (from its start) lacks: the swap census's check."""
    return oracle.missing(have, facts.effect, facts.free_text)


class Scorer:
    """Scores cells of one manifest. Keeps each task's reference end state once computed."""

    def __init__(self, bench: Adapter, manifest: Manifest, own: Mapping[str, OwnVerdict] | None = None) -> None:
        self.bench = bench
        self.manifest = manifest
        self.own = own or {}  # the swap census's diagonal verdicts the manifest took (`_own_verdict`)
        self.edits = arms.of(manifest).edits  # the fault arm: a control's reads are recorded, its blind spots flipped
        self.replayer = Replayer(bench, {t: f.reference for t, f in manifest.tasks.items()})
        self.judge = Judge(bench, manifest, self.replayer)
        self._reference_end: dict[str, Any] = {}
        self._reference_passed: dict[str, bool] = {}  # False: no replay of it passed (Replayer.reference_passed)
        # The adapter's one-line explanations, by (task, collections): AgentDojo's reads the verifier's
        # source, which costs more than scoring a cheap cell, and many cells of a task miss the same.
        self._explained: dict[tuple[str, tuple[str, ...]], str | None] = {}
        # The swap column being scored: its start and end snapshots, and its diff by way of seeing (`_changed`).
        self._column: tuple[Any, Any, dict[tuple[str, ...], list[oracle.CollectionDiff]]] | None = None
        self._measured: dict[str, tuple[str, list[str]]] = {}  # task -> its verifier's name, its end's collections

    def reference_end(self, task: str) -> Any:
        if task not in self._reference_end:
            self._reference_end[task] = self.replayer.reference_end(task)
            self._reference_passed[task] = self.replayer.reference_passed(task)
        return self._reference_end[task]

    def _row(
        self,
        cell: Cell,
        outcome: Outcome,
        verdict: bool | None,
        evidence: Evidence,
        reason: str | None = None,
        unscorable: bool = False,
    ) -> CellResult:
        return CellResult(
            cell_id=cell.cell_id,
            benchmark=self.manifest.benchmark,
            task=cell.task,
            family=cell.family,
            variant=cell.variant,
            outcome=outcome,
            verdict=verdict,
            evidence=evidence,
            reason=_capped(reason),
            unscorable=unscorable,
        )

    def unscorable(self, cell: Cell, control_outcome: str, task: str | None = None) -> CellResult:
        whose = "the task's" if task in (None, cell.task) else f"{task}'s"
        reason = f"unscorable: {whose} control ended {control_outcome}, so there is no correct run to compare with"
        return self._row(cell, Outcome.REFUSED, None, _noted(cell), reason=reason, unscorable=True)

    def failed(self, cell: Cell, reason: str) -> CellResult:
        """A cell the executor could not finish (timed out, its worker died): an error, recorded; marked the
        machinery's when the reason is (errors.Machinery), so that it is scored again."""
        machinery = True if isinstance(reason, Machinery) else None
        evidence = Evidence(
            edit=cell.note, detail=_capped(cell.detail), executor=_capped(str(reason)), infrastructure=machinery
        )
        return self._row(cell, Outcome.ERROR, None, evidence, reason=str(reason))

    def score(self, cell: Cell) -> CellResult:
        began = time.perf_counter()
        try:
            row = self._score(cell)
        except BenchmarkCrash as e:  # the benchmark's own process failed: this cell's error, not the audit's
            self.replayer.forget()  # its kept episodes died with it; the next cell replays afresh
            row = self.failed(cell, Machinery(e) if isinstance(e, InfrastructureError) else str(e))
        except Exception as e:  # noqa: BLE001  (benchmark code outside its verifier: reset, execute, snapshot)
            self.replayer.forget()  # what it kept may be half-made
            reason = f"the benchmark raised {type(e).__name__}: {e}"
            raised = _capped(traceback.format_exc(limit=5))
            evidence = Evidence(edit=cell.note, detail=_capped(cell.detail), traceback=raised)
            row = self._row(cell, Outcome.ERROR, None, evidence, reason=reason)
        return msgspec.structs.replace(row, seconds=round(time.perf_counter() - began, 6))

    def _score(self, cell: Cell) -> CellResult:
        edit, detail = cell.note, _capped(cell.detail)
        if cell.same_run_as is not None:
            same = f"the same run as {cell.same_run_as}: scored, and counted, there"
            evidence = Evidence(edit=edit, detail=detail, same_run_as=_capped(cell.same_run_as))
            return self._row(cell, Outcome.SAME_RUN, None, evidence, reason=same)
        if cell.run is None:
            return self._row(cell, Outcome.REFUSED, None, _noted(cell), reason=cell.note)
        if cell.run_task != cell.task:
            return self._score_swap(cell, cell.run)
        reference_end = self.reference_end(cell.task)
        if not cell.is_control and not self._reference_passed[cell.task]:
            slipped = (
                f"unscorable: no replay of the task's reference passed its verifier in {REPLAY_TRIES} tries (this "
                "benchmark's replays vary), so there is no correct end to compare with"
            )
            return self._row(cell, Outcome.REFUSED, None, _noted(cell), reason=slipped, unscorable=True)
        alternative = spec_of(cell.family).is_alternative
        # All of the reference is at hand before the cell's replay: replaying it again afterwards (after a
        # benchmark crash dropped it) would reset, and AppWorld keeps one live world per process, so a reset
        # between the cell's replay and its verifier would close the world the verifier reads.
        reference_steps = self.replayer.reference_steps(cell.task) if alternative else []
        # One replay that slipped (a browser's click) says nothing of the verifier: where replays vary, a control
        # is replayed until it passes, at most REPLAY_TRIES times, and how many it took is in its reason.
        again = partial(self.replayer.replay, cell.task, cell.run)
        done, tries = passing_replay(self.bench, cell.run, again) if cell.is_control else (again(), 1)
        error: str | None = None  # an action of the run raised (kept beside a control's verdict)
        if done.failed_at is not None:
            action = cell.run.actions[done.failed_at]
            error = _capped(f"action #{done.failed_at} {action.describe()} raised: {done.steps[-1].error}")
            if not cell.is_control:
                evidence = Evidence(edit=edit, detail=detail, error=error)
                return self._row(cell, Outcome.INCOMPLETE, None, evidence, reason=error)
        compared = self.judge.compare(cell, done, reference_end, reference_steps)
        vs_reference = compared.differs
        ignore = self.manifest.ignore_for(cell.task)
        vs_start = oracle.compare(done.start, done.end, ignore, base=done.start)
        differs = [Difference.of(d) for d in vs_reference]
        changed = _capped({d.collection: d.counts() for d in vs_start})
        telemetry: dict[str, str] | None = None
        if alternative and not vs_reference:
            end = alternatives.as_reference_wrote(cell.detail, done.end)
            kept = [p for p in ignore if p not in self.manifest.telemetry]  # telemetry not left out
            seen = oracle.compare(reference_end, end, kept, base=done.start)
            if seen:
                telemetry = _capped({d.collection: d.counts() for d in seen})
        run = cell.run
        if cell.is_control and not self.edits:
            heard, reads = self._own_verdict(cell.task, done, run, ignore), None
        else:
            heard, reads = self._verify_reading(done.episode, run)
        verdict = heard.verdict
        if verdict is None:
            evidence = Evidence(
                edit=edit,
                detail=detail,
                differs_from_reference=differs,
                changed_from_start=changed,
                telemetry_differs=telemetry,
                error=error,
                traceback=heard.traceback,
            )
            return self._row(cell, Outcome.ERROR, None, evidence, reason=heard.why)
        if not cell.is_control:
            compared = self.judge.observe(cell, done, compared, verdict.passed)
        evidence = Evidence(
            edit=edit,
            detail=detail,
            differs_from_reference=differs,
            changed_from_start=changed,
            telemetry_differs=telemetry,
            error=error,
            reads=reads,
            verifier=_capped(verdict.detail),
            unobserved_through=compared.unobserved_through,
            observed_by=_capped(compared.observed_by),
            trace_differs=_capped(compared.trace) or None,
            checks=verdict.checks or None,
            answer_differs=_capped(compared.answer),
            reward=verdict.reward,
        )
        nothing = self.manifest.tasks[cell.task].does_nothing
        if cell.is_control and reads is not None:  # its verifier's unread collections, flipped: blind spots
            flipped = blind_spots.flip_unread(self.bench, done.episode, run, done.end, reads, verdict.passed)
            evidence = msgspec.structs.replace(evidence, unread_flipped=flipped)
        outcome = outcome_of(cell, done.failed_at is None, verdict.passed, compared, nothing)
        reason: str | None = None
        if outcome is Outcome.VACUOUS:
            reason = f"the verifier ({verdict.detail}) passes the empty run: no action, no answer"
            return self._row(cell, outcome, verdict.passed, evidence, reason=reason)
        if outcome is Outcome.NOTHING_TO_DO:
            reason = (
                f"the verifier ({verdict.detail}) passes the empty run, rightly: the task has nothing to do (its "
                "reference run changes nothing and says nothing, and it asks no question: the start state already "
                "satisfies it)"
            )
            return self._row(cell, outcome, verdict.passed, evidence, reason=reason)
        if compared.answer is not None and not compared.differs:
            reason = compared.answer
        elif compared.trace and not compared.differs and not spec_of(cell.family).is_alternative:
            reason = f"equal end states, but the run {compared.trace[0]}: an effect only the trace holds"
        elif compared.unobserved_through is not None:
            reason = (
                f"its end state differs from the reference's, but not observably: none of the suite's"
                f" {compared.unobserved_through} reads returns other data on it"
            )
        elif compared.trace_graded and not compared.differs and not spec_of(cell.family).is_alternative:
            reason = "equal end states; the verifier grades the run's calls, which differ"
        elif compared.observed_by is not None:
            reason = (
                f"equal end states once telemetry and masks are left out, but the read {compared.observed_by}"
                " returns other data on the two"
            )
        if alternative and outcome is Outcome.REFUSED:
            reason = f"no alternative run: {compared.not_alternative or reason}"
        elif outcome is Outcome.WEAK_PIN_ACCEPT:
            reason = f"the verifier accepts another value for a weak pin ({cell.detail['weak_pin']})"
        elif outcome is Outcome.FALSE_REJECT and alternative:
            reason = f"the verifier ({verdict.detail}) fails a run the oracle finds ends as the reference does"
            if telemetry is not None:
                what = "; ".join(f"{c}: {n}" for c, n in telemetry.items())
                reason += f", apart from telemetry it leaves out ({what})"
            if spec_of(cell.family).needs_answer_channel:
                reason += (
                    f", and whose answer is the reference's in another form ({cell.note.removeprefix('answer: ')})"
                )
        elif (
            outcome is Outcome.FALSE_ACCEPT and vs_reference and compared.answer is None
        ):  # (a trace-only one keeps the trace's reason, above)
            reason = self._why_missed(cell.task, vs_reference, reads, reference_end)
        elif outcome is Outcome.CONTROL_PASS and tries > 1:
            reason = f"passed on replay {tries} of at most {REPLAY_TRIES}: this benchmark's replays vary"
        elif outcome is Outcome.CONTROL_FAIL:
            reason = f"the verifier ({verdict.detail}) fails the unedited reference run"
            if not run.actions:  # e.g. AgentDojo v1.2's workspace injection tasks 6-13: ground_truth() returns []
                reason += ", which has no action (the benchmark ships an empty reference run)"
            if tries > 1:
                reason += f", on each of {tries} replays"
        return self._row(cell, outcome, verdict.passed, evidence, reason=reason)

    def _score_swap(self, cell: Cell, run: Run) -> CellResult:
        """Task j's run, replayed from j's start, graded by task i's verifier (i = cell.task)."""
        verify_as = self.bench.verify_as
        if verify_as is None:
            raise AuditError(
                f"{self.manifest.benchmark} cannot grade one task's run with another's verifier (no verify_as)"
            )
        done = self.replayer.replay(cell.run_task, run, in_place=True)
        edit, detail = cell.note, _capped(cell.detail)
        run_task, rung = _capped(cell.run_task), _capped(cell.detail.get("rung"))
        if done.failed_at is not None:
            error = f"action #{done.failed_at} {run.actions[done.failed_at].describe()} raised: {done.steps[-1].error}"
            self._release(done)
            evidence = Evidence(edit=edit, detail=detail, run_task=run_task, rung=rung, error=_capped(error))
            return self._row(cell, Outcome.INCOMPLETE, None, evidence, reason=error)
        have = self._changed(done, self.manifest.ignore_for(cell.task))
        found = effect_missing(self.manifest.tasks[cell.task], have)
        gaps = found.gaps
        heard = self._verdict(lambda: verify_as(cell.task, done.episode, run))
        verdict, why = heard.verdict, heard.why
        if done.shared and verdict is not None:
            why = self._left_as_it_was(cell, done)
        else:
            self._release(done)
        evidence = Evidence(
            edit=edit,
            detail=detail,
            run_task=run_task,
            rung=rung,
            changed_from_start=_capped({d.collection: d.counts() for d in have}),
            effect_missing=_capped(gaps),
            effect_free_text_differs=_capped(found.loose) or None,
            traceback=heard.traceback,
            verifier=None if verdict is None else _capped(verdict.detail),
            checks=None if verdict is None else verdict.checks or None,
        )
        if verdict is None or why is not None:
            if done.shared:
                self.replayer.release()  # the next cell does not share an episode a failed verifier held
            return self._row(cell, Outcome.ERROR, None, evidence, reason=why)
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

    def _left_as_it_was(self, cell: Cell, done: Replay) -> str | None:
        """Why a verdict given in a shared episode does not count (the verifier changed what the next one
        reads), or None: it counts."""
        moved = oracle.compare(done.end, self.bench.snapshot(done.episode), [])
        if not moved:
            return None
        what = "; ".join(f"{d.collection}: {d.counts()}" for d in moved)
        return f"{cell.task}'s verifier changed the episode it graded in place ({what}), so its verdict is not recorded"

    def close(self) -> None:
        """Release the episodes kept for later cells: the worker scoring with this scorer is done."""
        self.replayer.release()

    def _changed(self, done: Replay, ignore: list[str]) -> list[oracle.CollectionDiff]:
        """What a swap column's run changed from its start, seen as the grading task sees state (`ignore`). With
        a forking adapter every cell of the column shares the kept start and end snapshots, so the diff is
        computed once per column and per way of seeing (the grading tasks of a suite see it in a few ways: a
        declaration some of them grade is their state), not per cell."""
        column = self._column
        if column is None or column[0] is not done.start or column[1] is not done.end:
            column = self._column = (done.start, done.end, {})
        key = tuple(ignore)
        if key not in column[2]:
            column[2][key] = oracle.compare(done.start, done.end, ignore, base=done.start)
        return column[2][key]

    @staticmethod
    def _verdict(call: Callable[[], Verdict]) -> Heard:
        """Call the verifier: its verdict, or why there is none (and the traceback, when it raised)."""
        try:
            verdict = call()
        except BenchmarkCrash:
            raise  # the benchmark's process failed, not its verifier: recorded by `score`
        except VerdictError as e:  # the verifier returned, but not a verdict verimut can record (guard.py)
            return Heard(why=f"the verifier's answer is not a verdict: {e}")
        except Exception as e:  # noqa: BLE001  (the verifier is the benchmark's code: any exception is its error)
            raised = _capped(traceback.format_exc(limit=5))
            return Heard(why=f"verifier raised {type(e).__name__}: {e}", traceback=raised)
        return Heard(verdict=verdict)

    def _own_verdict(self, task: str, done: Replay, run: Run, ignore: list[str]) -> Heard:
        """A swap census's control (its diagonal): whether the task's verifier passes its own reference run, all the
        census asks of it. Where the manifest's declared-field check already took that verdict on an end equal to
        this replay's (declared.OwnVerdict), it is taken, not asked again; the verifier's reads and blind spots are
        the fault arm's (`verimut audit`) and are not recorded here."""
        own = self.own.get(task)
        if own is not None and own.digest == oracle.digest(done.end, ignore):
            return Heard(verdict=own.verdict)
        return self._verdict(lambda: self.bench.verify(done.episode, run))

    def _verify_reading(self, episode: Any, run: Run) -> tuple[Heard, Reads | None]:
        """The verdict, and what the verifier read while it ran where the adapter records it (else None)."""
        verify_reading = self.bench.verify_reading
        if verify_reading is None:
            return self._verdict(lambda: self.bench.verify(episode, run)), None
        got: list[Reads] = []

        def call() -> Verdict:
            verdict, reads = verify_reading(episode, run)
            got.append(reads)
            return verdict

        return self._verdict(call), (got[0] if got else None)

    def _why_missed(
        self, task: str, differs: list[oracle.CollectionDiff], reads: Reads | None, end: Any = None
    ) -> str | None:
        """From what the verifier read, measured; else the adapter's explanation, labelled a source-text guess."""
        if reads is not None:
            if task not in self._measured:  # (its name reads the verifier's source: once per task, like `explain`)
                located = self.bench.verifier_source(task) if self.bench.verifier_source is not None else None
                name = f"{located[2]}()" if located is not None else f"{task}'s verifier"
                self._measured[task] = (name, list(oracle.collections(end)) if end is not None else [])
            name, known = self._measured[task]
            return read_sets.explain(name, reads, [read_sets.differing(d) for d in differs], known)
        explain = self.bench.explain
        if explain is None:
            return None
        key = (task, tuple(d.collection for d in differs))
        if key not in self._explained:
            said = explain(task, list(key[1]))
            self._explained[key] = (
                None
                if said is None
                else f"{said} (a guess from the verifier's source text, not measured: this adapter does not record reads)"
            )
        return self._explained[key]
