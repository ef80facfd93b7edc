"""What a reward function and a reasoning-gym dataset have in common: tasks whose run is one answer.

A reward function is a verifier whose state is the answer alone (docs/rewards-functions.md): a task is a dataset
row (its prompt, its reference answer), a run has no action, and `Run.answer` is the completion the reward grades.
`AnswerTasks` is the whole adapter for such tasks; what differs is how a row is scored, `score(row, completion)`,
which returns the reward as a number. The reward is full when it reaches `full`; any lower number fails.

A reward that returns None, raises, or returns something that is not a finite number gives no verdict: the cell
is an error (guard.number), never a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from verimut.core.benchmark import Mapper
from verimut.core.errors import AuditError
from verimut.core.guard import number
from verimut.core.run import Action, AnswerChannel, Run, Step, Verdict
from verimut.grammar.oos import suite_of
from verimut.grammar.probes import same

EPS = 1e-9
REPEATS = 10  # falsepass's P11: the same completion scored ten times
STABILITY_ROWS = 3  # rows per reward function whose completions are scored REPEATS times (falsepass's --few)
CHECKS = "reward_checks"  # the provenance key of the per-suite dataset checks (JSON): findings/reward_numbers.py


class Row(msgspec.Struct, frozen=True):
    """One task: what the model reads, the reference answer (None: the dataset gives none), and the row as given."""

    prompt: str
    reference: str | None
    row: dict[str, Any] = {}


class NoReward(ValueError):
    """The reward function returned no number for a completion (None)."""


class _Episode(msgspec.Struct):
    task: str


Score = Callable[[Row, str], Any]


def _few(items: Sequence[str], k: int = 8) -> str:
    return ", ".join(items[:k]) + (", ..." if len(items) > k else "")


def _repeated(rows: Mapping[str, Row]) -> tuple[list[list[str]], list[list[str]]]:
    """The tasks that share a prompt (whitespace aside), and those of them with different reference answers."""
    by_prompt: dict[str, list[str]] = {}
    for task, row in rows.items():
        by_prompt.setdefault(" ".join(row.prompt.split()), []).append(task)
    twice = [ts for ts in by_prompt.values() if len(ts) > 1]
    return twice, [ts for ts in twice if len({rows[t].reference for t in ts}) > 1]


def hygiene_counts(rows: Mapping[str, Row]) -> tuple[int, int]:
    twice, conflicting = _repeated(rows)
    return len(twice), len(conflicting)


def hygiene(rows: Mapping[str, Row]) -> dict[str, str]:
    """The dataset's own defects a reward inherits (falsepass's P12): a prompt given twice, and one given twice with
    different reference answers (conflicting labels: no completion can earn full reward on both)."""
    twice, conflicting = _repeated(rows)
    out: dict[str, str] = {}
    if twice:
        out["duplicate_prompts"] = f"{len(twice)} prompt(s) given more than once: " + _few(["=".join(t) for t in twice])
    if conflicting:
        shown = _few(["=".join(t) for t in conflicting])
        out["conflicting_labels"] = f"{len(conflicting)} prompt(s) with different reference answers: {shown}"
    return out


class SuiteChecks(msgspec.Struct, frozen=True):
    """Per reward function: the dataset's own defects it inherits, and whether it gives one completion one reward."""

    duplicate_prompts: int = 0
    conflicting_labels: int = 0
    unstable: str | None = None  # which completion earned which rewards over REPEATS calls; None: always the same
    repeats_checked: int = 0  # completions scored REPEATS times


def _outcome(score: Score, row: Row, completion: str) -> str:
    """One call's result as text to compare: the reward, or the exception a call raised."""
    try:
        return repr(score(row, completion))
    except Exception as e:  # noqa: BLE001  (a reward that raises on one call of ten is unstable, not broken)
        return f"raised {type(e).__name__}"


def stability(
    rows: Mapping[str, Row], score: Score, fill: Callable[[str], str], few: int, each: Mapper = map
) -> dict[str, SuiteChecks]:
    """Per suite, its first `few` rows' reference completion and a wrong one in the same format (the next row's
    reference of another meaning), each scored REPEATS times: a reward that varies on one completion makes every
    verdict of the audit (and the trainer's signal) a draw. Duplicates and conflicting labels per suite too.

    Each call is one item of `each` (on every core, in the audit): the check is thousands of calls, and one
    completion can take seconds a call (a wrong integral's sympy simplification: 1.5 s on reasoning-gym's
    intermediate_integration), so its ten calls are spread too."""
    by_suite: dict[str, list[str]] = {}
    for task in rows:
        by_suite.setdefault(suite_of(task), []).append(task)
    shown: list[tuple[str, str, str]] = []  # (task, what, completion)
    for tasks in by_suite.values():
        for task in tasks[:few]:
            ref = rows[task].reference
            assert ref is not None
            other = next((r for t in tasks if (r := rows[t].reference) is not None and not same(r, ref)), None)
            shown.append((task, "reference", fill(ref)))
            if other is not None:
                shown.append((task, "wrong in format", fill(other)))

    def once(i: int) -> str:  # one call: a slow completion's ten calls then spread over the cores too
        task, _, completion = shown[i // REPEATS]
        return _outcome(score, rows[task], completion)

    calls = list(each(once, range(len(shown) * REPEATS)))
    varied: dict[str, list[str]] = {suite: [] for suite in by_suite}
    checked = dict.fromkeys(by_suite, 0)
    for n, (task, what, _) in enumerate(shown):
        got = calls[n * REPEATS : (n + 1) * REPEATS]
        suite = suite_of(task)
        checked[suite] += 1
        if len(set(got)) > 1:
            distinct = sorted(set(got))
            varied[suite].append(f"{task} {what}: {len(distinct)} distinct in {REPEATS} calls ({', '.join(distinct)})")
    return {
        suite: SuiteChecks(
            *hygiene_counts({t: rows[t] for t in tasks}),
            unstable="; ".join(varied[suite]) or None,
            repeats_checked=checked[suite],
        )
        for suite, tasks in by_suite.items()
    }


class AnswerTasks:
    """An adapter over answer-only tasks. `score(row, completion)` is the reward under test, called unmodified."""

    telemetry: tuple[str, ...] = ()
    grammar = "answer"  # the answer families and probes (grammar/probes.py), not the tool-call families

    def __init__(
        self,
        name: str,
        version: str,
        rows: Mapping[str, Row],
        score: Score,
        full: float,
        where: str,
        slot: str = "",
        provenance: Mapping[str, str] | None = None,
        few: int = STABILITY_ROWS,
    ) -> None:
        # A row with no reference answer has no correct run to edit: left out, and named in the provenance.
        unanswered = [t for t, r in rows.items() if r.reference is None]
        self.rows = {t: r for t, r in rows.items() if r.reference is not None}
        if not self.rows:
            raise AuditError(f"{name}: no task to audit (no row has a reference answer)")
        self.name, self.version = name, version
        self.score = score
        self.full = full
        self.answer_channel = AnswerChannel(where, slot=slot)
        self._provenance = dict(provenance or {})
        if unanswered:
            self._provenance["no_reference"] = (
                f"{len(unanswered)} task(s) left out, no reference answer: {_few(unanswered)}"
            )
        self._provenance.update(hygiene(self.rows))
        self._few = few
        self._checked = False

    def prepare(self, each: Mapper) -> None:
        """The stability check, on the executor's cores, before the manifest asks for the provenance."""
        self._check(each)

    def provenance(self) -> Mapping[str, str]:
        # Scored once, when the manifest is built (`prepare`): a worker that rebuilds the adapter never pays for it.
        self._check(map)
        return self._provenance

    def _check(self, each: Mapper) -> None:
        if not self._checked:
            checks = stability(self.rows, self.score, self.answer_channel.fill, self._few, each)
            self._provenance[CHECKS] = msgspec.json.encode(checks).decode()
            unstable = [s or "(all)" for s, c in checks.items() if c.unstable]
            if unstable:
                self._provenance["unstable_reward"] = (
                    f"{len(unstable)} reward function(s) gave one completion different rewards: {_few(unstable)}"
                )
            self._checked = True

    def tasks(self) -> Sequence[str]:
        return list(self.rows)

    def instruction(self, task: str) -> str:
        return self.rows[task].prompt

    def reset(self, task: str) -> _Episode:
        return _Episode(task)

    def reference(self, task: str, episode: Any) -> Run:
        reference = self.rows[task].reference
        assert reference is not None  # rows without one are left out
        return Run((), self.answer_channel.fill(reference))

    def execute(self, episode: Any, action: Action) -> Step:
        return Step("", error=f"a reward function grades an answer; it has no action {action.name!r}")

    def is_write(self, action: Action) -> bool:
        return False

    def snapshot(self, episode: Any) -> Any:
        return {}  # the state is the answer alone: the answer families' oracle reads it (answers.confirm)

    def verify(self, episode: Any, run: Run) -> Verdict:
        task = episode.task
        given = self.score(self.rows[task], run.answer)
        if given is None:
            raise NoReward("the reward function returned None: a trainer cannot score this completion")
        reward = number(given, "the reward")
        return Verdict(reward >= self.full - EPS, f"reward {reward:g} of {self.full:g}", reward=reward)
