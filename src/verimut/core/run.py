"""A run: the actions an agent takes, plus the completion claim it ends with; and what the verifier says of it."""

from __future__ import annotations

from typing import Any

import msgspec


class Action(msgspec.Struct, frozen=True):
    """One call of a benchmark tool: its name and its arguments as plain JSON data."""

    name: str
    args: dict[str, Any] = {}

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{self.name}({args})"


class Run(msgspec.Struct, frozen=True):
    """A whole run: actions in order, then the final answer (the completion claim)."""

    actions: tuple[Action, ...]
    answer: str = ""

    def replace_actions(self, actions: list[Action] | tuple[Action, ...]) -> Run:
        return Run(actions=tuple(actions), answer=self.answer)


class AnswerChannel(msgspec.Struct, frozen=True):
    """Where a run's final answer lives, as its adapter declares it (`answer_channel`), so the answer families
    can read and edit it: `Run.answer` (AgentDojo's model output, tau2-bench's assistant message), or one
    argument of the run's last call of a tool (AppWorld's `complete_task(answer=...)`).
    """

    where: str  # one line a report prints: "AgentDojo's model output"
    tool: str = ""  # the answer is this tool's argument `arg` in the run's last call of it
    arg: str = ""
    # The format the task asks an answer to be written in, with "{answer}" where the answer goes
    # ("<answer>{answer}</answer>", "\\boxed{{answer}}"); "" when the whole text is the answer. The answer probes
    # (grammar/probes.py) write their wrong answers in it, so a reward that pays for the format alone shows.
    slot: str = ""

    def fill(self, answer: str) -> str:
        """`answer` written in the task's format (`slot`)."""
        return self.slot.replace("{answer}", answer) if self.slot else answer

    def inner(self, said: str) -> str | None:
        """What a text says inside the format's slot (the text itself without one), or None when not in the format."""
        if not self.slot:
            return said
        head, _, tail = self.slot.partition("{answer}")
        start = said.find(head)
        end = said.rfind(tail) if tail else len(said)
        if start < 0 or end < start + len(head):
            return None
        return said[start + len(head) : end]

    def _last_call(self, run: Run) -> int | None:
        calls = [i for i, a in enumerate(run.actions) if a.name == self.tool]
        return calls[-1] if calls else None

    def read(self, run: Run) -> str:
        """The run's answer ("" when it gives none)."""
        if not self.tool:
            return run.answer
        at = self._last_call(run)
        value = None if at is None else run.actions[at].args.get(self.arg)
        return "" if value is None else str(value)

    def write(self, run: Run, text: str) -> Run:
        """The same run saying `text` instead ("" drops the answer: the argument is left out)."""
        if not self.tool:
            return Run(run.actions, text)
        at = self._last_call(run)
        if at is None:
            return run
        old = run.actions[at]
        args = {k: v for k, v in old.args.items() if k != self.arg}
        if text:
            args[self.arg] = text
        actions = list(run.actions)
        actions[at] = Action(old.name, args)
        return run.replace_actions(actions)


class Step(msgspec.Struct, frozen=True):
    """What one executed action returned. `error` is set when the action raised."""

    output: str
    error: str | None = None


class Verdict(msgspec.Struct, frozen=True):
    """The verifier's answer. `checks` holds per-check results when the verifier reports several."""

    passed: bool
    detail: str = ""
    checks: dict[str, bool] = {}
    # A reward function's number for the run (RL reward functions, reasoning-gym's score_answer): `passed` says
    # whether it is the full reward; the number itself is what the false-pass ceiling and lazy-policy reward read.
    reward: float | None = None


__all__ = ["Action", "AnswerChannel", "Run", "Step", "Verdict"]
