"""Builders of verimut's MiniWoB++ actions (the vocabulary is `miniwob_page`'s), for the solver modules."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Action = dict[str, Any]


@dataclass(frozen=True)
class Instruction:
    """What a solver may read: the utterance, its fields (miniwob's own extractor), and the page at the start
    through verimut's own reader."""

    task: str
    goal: str
    fields: dict[str, str]
    read: Callable[[str, Any], Any]  # (a JS function expression, its one argument) -> its JSON result


Solver = Callable[[Instruction], list[Action]]


def check(label: str) -> Action:
    return {"name": "check", "args": {"label": label}}


def fill(field: str, text: str) -> Action:
    return {"name": "fill", "args": {"field": field, "text": text}}


def fill_css(css: str, text: str) -> Action:
    return {"name": "fill", "args": {"css": css, "text": text}}


def choose(field: str, option: str) -> Action:
    return {"name": "choose", "args": {"field": field, "option": option}}


def press(button: str) -> Action:
    return {"name": "press", "args": {"button": button}}


def submit(button: str) -> Action:
    """The task's submit button, by its text: the run's claim that it is done."""
    return {"name": "submit", "args": {"button": button}}


def submit_css(css: str, text: str) -> Action:
    """The task's submit control when it is not a button (a div with the text Submit)."""
    return {"name": "submit", "args": {"css": css, "text": text}}


def click(css: str, text: str | None = None) -> Action:
    return {"name": "click", "args": {"css": css} if text is None else {"css": css, "text": text}}


def key(name: str) -> Action:
    return {"name": "key", "args": {"key": name}}


def quoted(goal: str) -> list[str]:
    """The instruction's double-quoted values, in order."""
    return re.findall(r'"([^"]*)"', goal)
