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

from verimut.core.errors import AuditError
from verimut.core.guard import number
from verimut.core.run import Action, AnswerChannel, Run, Step, Verdict

EPS = 1e-9


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


def hygiene(rows: Mapping[str, Row]) -> dict[str, str]:
    """The dataset's own defects a reward inherits (falsepass's P12): a prompt given twice, and one given twice with
    different reference answers (conflicting labels: no completion can earn full reward on both)."""
    by_prompt: dict[str, list[str]] = {}
    for task, row in rows.items():
        by_prompt.setdefault(" ".join(row.prompt.split()), []).append(task)
    twice = [ts for ts in by_prompt.values() if len(ts) > 1]
    conflicting = [ts for ts in twice if len({rows[t].reference for t in ts}) > 1]
    out: dict[str, str] = {}
    if twice:
        out["duplicate_prompts"] = f"{len(twice)} prompt(s) given more than once: " + _few(["=".join(t) for t in twice])
    if conflicting:
        shown = _few(["=".join(t) for t in conflicting])
        out["conflicting_labels"] = f"{len(conflicting)} prompt(s) with different reference answers: {shown}"
    return out


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

    def provenance(self) -> Mapping[str, str]:
        return self._provenance

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
