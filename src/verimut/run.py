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


class Step(msgspec.Struct, frozen=True):
    """What one executed action returned. `error` is set when the action raised."""

    output: str
    error: str | None = None


class Verdict(msgspec.Struct, frozen=True):
    """The verifier's answer. `checks` holds per-check results when the verifier reports several."""

    passed: bool
    detail: str = ""
    checks: dict[str, bool] = {}
