"""Solvers for the first MiniWoB++ tasks verimut audited: checkboxes, options, a list, text, login."""

from __future__ import annotations

import re

from ._act import Action, Instruction, check, choose, fill, quoted, submit


def _checkboxes(i: Instruction) -> list[Action]:
    m = re.fullmatch(r"Select (.*) and click Submit\.", i.goal)
    if m is None:
        raise ValueError(f"not a click-checkboxes instruction: {i.goal!r}")
    words = [] if m.group(1) == "nothing" else [w.strip() for w in m.group(1).split(",")]
    return [*(check(w) for w in words), submit("Submit")]


def _option(i: Instruction) -> list[Action]:
    m = re.fullmatch(r"Select (.*) and click Submit\.", i.goal)
    if m is None:
        raise ValueError(f"not a click-option instruction: {i.goal!r}")
    return [check(m.group(1)), submit("Submit")]


def _enter_text(i: Instruction) -> list[Action]:
    [text] = quoted(i.goal)
    return [fill("tt", text), submit("Submit")]


def _login(i: Instruction) -> list[Action]:
    user, password = quoted(i.goal)
    return [fill("username", user), fill("password", password), submit("Login")]


def _password(i: Instruction) -> list[Action]:
    [password] = quoted(i.goal)
    return [fill("password", password), fill("verify", password), submit("Submit")]


def _list(i: Instruction) -> list[Action]:
    m = re.fullmatch(r"Select (.*) from the list and click Submit\.", i.goal)
    if m is None:
        raise ValueError(f"not a choose-list instruction: {i.goal!r}")
    return [choose("options", m.group(1)), submit("Submit")]


SOLVERS = {
    "click-checkboxes": _checkboxes,
    "click-option": _option,
    "enter-text": _enter_text,
    "login-user": _login,
    "enter-password": _password,
    "choose-list": _list,
}
STATES: dict[str, str] = {}
