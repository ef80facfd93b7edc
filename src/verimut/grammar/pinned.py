"""Pinned values: written values the task fixes, and other legal values of the same kind.

A value is pinned when it appears in the instruction, or in what an earlier read of the
reference run returned, or is a number; a boolean is pinned when the instruction names its
argument ("make it recurring" pins `recurring`). Only pinned values are varied by wrong-value:
a verifier that accepts another free-text subject is right to.

How strongly (`weakness`; docs/method.md#pin-sources). A value can coincide with a read or with a word
of the instruction without the task asking for it: banking/user_task_11's reference writes the subject
'VAT' because the instruction explains the payment with that word, and banking/user_task_15's refund
date is a date a read happens to hold; neither instruction asks for a subject or a date. So a pin is weak
when the argument is not one the instruction asks about: not a target (whom or what the write acts on:
a recipient, a user, a channel, an id; `TARGET_WORDS`), not named by the instruction ("the subject should
be..."), and its value is neither quoted there nor a datum (digits, an address). A read
that a target's value comes from is one the instruction points at (workspace/user_task_25: "each person
mentioned in the TODO list"), so that pin is strong. A weak pin's findings are reported apart.

A goal-contract task (`GOAL`) is judged on the goal's own text: a value is pinned only when that text
fixes it (quotes it, names its argument, or states a number other than as a bound: "no more than $10,000"
is a cap, "as much as possible" no number at all).

Another value comes from the start state when it holds one of the same kind; failing that a
number, date or time moves by one step, a boolean flips, and any other string is synthesized
in the same shape (`synthesize`).
"""

from __future__ import annotations

import datetime
import re
import string
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import msgspec

from verimut.core.run import Run
from verimut.oracle import state as oracle

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?$")
_EMAIL = re.compile(r"^([^@\s]+)(@[^@\s]+\.[^@\s]+)$")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


class ArgPin(msgspec.Struct, frozen=True):
    """One argument of one write in a run, and where its value is pinned from (None: not pinned).

    `weak`: why the pin is only weak (None: it is strong, or the value is not pinned)."""

    action: int
    arg: str
    value: Any
    source: str | None
    weak: str | None = None


# Words of an argument's name that make it a target: whom or what the write acts on. A task that asks for
# the write asks for its target, however the instruction words it ("send them", "each person").
TARGET_WORDS = frozenset(
    {
        "recipient", "recipients", "to", "cc", "bcc", "user", "users", "member", "channel", "iban", "account",
        "email", "emails", "participant", "participants", "id", "ids", "contact", "contacts", "hotel",
        "restaurant", "company", "path", "file", "folder", "dir", "directory", "destination", "source",
    }
)  # fmt: skip
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"|‘([^’]+)’|“([^”]+)”")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_BOUND = re.compile(
    r"(no more than|not more than|at most|up to|less than|under|maximum|max\.?|not exceed\w*)\W*$", re.IGNORECASE
)


def is_target(arg: str, extra: frozenset[str] = frozenset()) -> bool:
    """Whether an argument names whom or what its write acts on (any word of its name in TARGET_WORDS or `extra`)."""
    words = {w.lower() for w in _NAME_WORD.findall(arg)}
    return arg in extra or bool(words & (TARGET_WORDS | extra))


def _quoted(text: str, value: str) -> bool:
    return any(value in (g for g in m.groups() if g) for m in _QUOTED.finditer(text))


def _datum(value: str) -> bool:
    """A value that reads as a stated datum, not words in passing: it has digits, or is an address. (Words alone
    are not: AppWorld's "pay Ann for the concert tickets" says what the money is for, not what its memo says.)"""
    return any(c.isdigit() for c in value) or "@" in value


def states_number(text: str, value: float) -> bool:
    """Whether `text` states `value` (10000 as "10,000" too), other than as a bound ("no more than $10,000")."""
    for m in _NUMBER.finditer(text):
        try:
            n = float(m.group().replace(",", ""))
        except ValueError:
            continue
        if n == value and not _BOUND.search(text[max(0, m.start() - 24) : m.start()].rstrip("$€£ ")):
            return True
    return False


def weakness(pin: ArgPin, instruction: str, targets: frozenset[str] = frozenset()) -> str | None:
    """Why a pinned string value is only weakly pinned (None: strongly, or not a string, or not pinned)."""
    value = pin.value[0] if isinstance(pin.value, list) and len(pin.value) == 1 else pin.value
    if pin.source is None or not isinstance(value, str) or is_target(pin.arg, targets):
        return None
    if _names(instruction, pin.arg):
        return None
    if pin.source == "instruction":
        if _quoted(instruction, value) or _datum(value):
            return None
        return f"the instruction uses the word {value!r} but never asks for a {' '.join(arg_words(pin.arg)) or pin.arg}"
    return f"only {pin.source} holds it, and the instruction never asks for a {' '.join(arg_words(pin.arg)) or pin.arg}"


# Words that name no subject: a title's articles and joints ("Meeting with the team").
_PLAIN = frozenset({"the", "and", "for", "with", "from", "about", "our", "your", "his", "her", "their", "into", "onto"})


def _subject_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) >= 3 and not w.isdigit()} - _PLAIN


def other_subject(instruction: str, value: Any, moved: Any) -> str | None:
    """Why `moved` names another subject than the instruction names with `value` (None: it does not).

    A weak pin's value may still echo the instruction's own words: workspace/user_task_15 asks for an event "for
    the family reunion", its reference titles it 'Family Reunion' (a read holds the title; no title is asked
    for), and a title that shares none of those words ('Ads campaign project deadline', another email's) is
    plainly the wrong event, not a wording the task leaves open. A value that keeps one of the words, or has no
    words (a date), stays a weak pin.
    """
    if not isinstance(value, str) or not isinstance(moved, str):
        return None
    named = _subject_words(value) & _subject_words(instruction)
    words = _subject_words(moved)
    if not named or not words or named & words:
        return None
    return f"the instruction names {' '.join(sorted(named))!r}, which {moved!r} does not"


def goal_source(value: Any, goal: str, arg: str, read_source: str | None) -> str | None:
    """Where a goal-contract task's goal text fixes `value` (None: the goal leaves it open)."""
    if isinstance(value, bool):
        return f"goal names {' '.join(arg_words(arg))!r}" if _names(goal, arg) else None
    if isinstance(value, (int, float)):
        return "goal states the number" if states_number(goal, value) else None
    if isinstance(value, list):
        found = [goal_source(v, goal, arg, read_source) for v in value]
        return next((f for f in found if f is not None), None)
    if isinstance(value, str):
        if _mentions(goal, value):
            return "goal"
        if read_source is not None and (_names(goal, arg) or is_target(arg)):
            return f"{read_source}, for a {arg} the goal asks about"
    return None


def _mentions(text: str, value: str) -> bool:
    # Case-sensitive and whole-word: "Refund" is not pinned by "please refund them".
    if len(value.strip()) < 2:
        return False
    return re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text) is not None


def arg_words(arg: str) -> list[str]:
    """The words of an argument's name, lowercased: `is_recurring` and `isRecurring` are both ["recurring"].

    Words under three letters ("is", "to", "id") are dropped: the instruction says them for other reasons.
    """
    return [w.lower() for w in _WORD.findall(arg) if len(w) >= 3]


def _names(instruction: str, arg: str) -> bool:
    words = arg_words(arg)
    return bool(words) and all(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", instruction, re.IGNORECASE) for w in words)


def pin_source(value: Any, instruction: str, reads: Sequence[tuple[int, str, str]], arg: str = "") -> str | None:
    """Where `value`, written as argument `arg`, is pinned from. `reads` are (index, tool, output) of earlier reads.

    A boolean is pinned only by the instruction naming its argument: "True" in a read says nothing about it.
    Only a boolean needs `arg`; a string or number is pinned (or not) whatever it is written as.
    """
    if isinstance(value, bool):
        return f"instruction names {' '.join(arg_words(arg))!r}" if _names(instruction, arg) else None
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        for item in value:
            source = pin_source(item, instruction, reads, arg)
            if source is not None:
                return source
        return None
    if not isinstance(value, str):
        return None
    if _mentions(instruction, value):
        return "instruction"
    for index, tool, output in reads:
        if _mentions(output, value):
            return f"read #{index} {tool}"
    return None


def pins(
    run: Run,
    writes: Sequence[bool],
    outputs: Sequence[str],
    instruction: str,
    goal: bool = False,
    targets: frozenset[str] = frozenset(),
) -> list[ArgPin]:
    """Every argument of every write in `run`, with its pin source and, for a weak pin, why it is weak.

    `goal`: the instruction is a goal-contract task's goal; only what its text fixes is pinned (`goal_source`).
    """
    out: list[ArgPin] = []
    for i, action in enumerate(run.actions):
        if not writes[i]:
            continue
        reads = [(j, run.actions[j].name, outputs[j]) for j in range(i) if not writes[j]]
        for arg, value in action.args.items():
            source = pin_source(value, instruction, reads, arg)
            if goal:
                read = source if source is not None and source.startswith("read") else None
                pin = ArgPin(i, arg, value, goal_source(value, instruction, arg, read))
            else:
                pin = ArgPin(i, arg, value, source)
                pin = msgspec.structs.replace(pin, weak=weakness(pin, instruction, targets))
            out.append(pin)
    return out


# --- other legal values ------------------------------------------------------------------


class ValueIndex(msgspec.Struct, frozen=True):
    """Scalar values of a start state by place ("collection.field"), and the places of each value."""

    by_place: dict[str, list[Any]]
    places_of: dict[str, list[str]]

    def places_named(self, field: str) -> list[str]:
        return [p for p in self.by_place if p.rsplit(".", 1)[-1] == field]


def _key(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


def _scalars(value: Any) -> list[Any]:
    items = value if isinstance(value, list) else [value]
    return [v for v in items if isinstance(v, (str, int, float)) and not isinstance(v, bool)]


def index_values(snapshot: Any) -> ValueIndex:
    """Where each scalar of the start state sits: a record field, or a named field of a dict."""
    by_place: dict[str, set[Any]] = defaultdict(set)
    for path, coll in oracle.collections(snapshot).items():
        for key, record in coll.records.items():
            if isinstance(record, dict):
                for field, value in record.items():
                    by_place[f"{path}.{field}"].update(_scalars(value))
            else:
                by_place[f"{path}.{key}" if coll.keyed else path].update(_scalars(record))
    places_of: dict[str, set[str]] = defaultdict(set)
    for place, values in by_place.items():
        for v in values:
            places_of[_key(v)].add(place)
    return ValueIndex(
        {p: sorted(vs, key=_key) for p, vs in by_place.items()},
        {k: sorted(ps) for k, ps in places_of.items()},
    )


def _same_kind(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return ("@" in a) == ("@" in b) and bool(_DATE.match(a)) == bool(_DATE.match(b))
    return type(a) is type(b)


def alternative(value: Any, arg: str, index: ValueIndex, used: frozenset[Any] = frozenset()) -> Any | None:
    """A different legal value of the same kind, or None when there is none to be had.

    A list loses its last element (a one-element list has it moved instead); a scalar
    moves to another value of a start-state field it sits in (same collection, same
    field), or of a field named like the argument; failing that a number moves by one, a date by one day
    and a boolean flips. (A string with no other value of its kind: `vary`.)
    A state value that is not among `used` (the run's own argument values) comes first: a value
    the run already uses elsewhere is often the acting user, or another target of the same task.
    """
    if isinstance(value, list):
        if len(value) > 1:
            return value[:-1]
        if len(value) == 1:
            moved = alternative(value[0], arg, index, used)
            return None if moved is None else [moved]
        return None
    if isinstance(value, bool):
        return not value
    if value is None:
        return None
    places = index.places_of.get(_key(value), []) or index.places_named(arg)
    others = [o for p in places for o in index.by_place[p] if o != value and _same_kind(value, o)]
    for other in sorted(others, key=lambda o: o in used):  # stable: the state's order otherwise
        return other
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str) and _DATE.match(value):
        return (datetime.date.fromisoformat(value) + datetime.timedelta(days=1)).isoformat()
    if isinstance(value, str) and _DATETIME.match(value):
        moved = datetime.datetime.fromisoformat(value) + datetime.timedelta(hours=1)
        return moved.strftime("%Y-%m-%d %H:%M" if len(value) == 16 else "%Y-%m-%d %H:%M:%S").replace(" ", value[10])
    return None


# --- synthesized values ------------------------------------------------------------------


def _cycle(chars: str) -> dict[str, str]:
    return dict(zip(chars, chars[1:] + chars[0]))


# ASCII only: a letter outside it has no obvious "next" of the same class, and is left as it is.
_NEXT = {**_cycle(string.digits), **_cycle(string.ascii_lowercase), **_cycle(string.ascii_uppercase)}


def synthesize(value: str) -> str | None:
    """Another string of the same shape, a near miss nobody wrote: for a pinned value the start state
    has no other of. An email keeps its domain and changes its local part (the domain only when the
    local part has no letter or digit). Any other string keeps its length and the class of every
    character: digit, upper, lower, and anything else unchanged. The last ASCII letter or digit moves
    to the next of its class (9 to 0, z to a): "GB29" -> "GB20", "Smith" -> "Smiti".

    Deterministic, and never the input; None only when there is no ASCII letter or digit to change.
    """
    email = _EMAIL.match(value)
    if email:
        local = synthesize(email.group(1))
        if local is not None:
            return local + email.group(2)
    for i in range(len(value) - 1, -1, -1):
        if value[i] in _NEXT:
            return value[:i] + _NEXT[value[i]] + value[i + 1 :]
    return None


class Varied(msgspec.Struct, frozen=True):
    """The value wrong-value writes instead, and whether it was synthesized (the start state had none)."""

    value: Any
    synthesized: bool = False


def vary(value: Any, arg: str, index: ValueIndex, used: frozenset[Any] = frozenset()) -> Varied | None:
    """Another value for a pinned argument: `alternative`, failing that a synthesized string
    (a one-element list has its element synthesized); None when neither has one."""
    moved = alternative(value, arg, index, used)
    if moved is not None:
        return Varied(moved)
    if isinstance(value, str):
        made = synthesize(value)
        return None if made is None else Varied(made, synthesized=True)
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
        made = synthesize(value[0])
        return None if made is None else Varied([made], synthesized=True)
    return None
