"""Pinned values: written values the task fixes, and other legal values of the same kind.

A value is pinned when it appears in the instruction, or in what an earlier read of the
reference run returned, or is a number. Only pinned values are varied by wrong-value:
a verifier that accepts another free-text subject is right to.
"""

from __future__ import annotations

import datetime
import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import msgspec

from verimut import oracle
from verimut.run import Run

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?$")


class ArgPin(msgspec.Struct, frozen=True):
    """One argument of one write in a run, and where its value is pinned from (None: not pinned)."""

    action: int
    arg: str
    value: Any
    source: str | None


def _mentions(text: str, value: str) -> bool:
    # Case-sensitive and whole-word: "Refund" is not pinned by "please refund them".
    if len(value.strip()) < 2:
        return False
    return re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text) is not None


def pin_source(value: Any, instruction: str, reads: Sequence[tuple[int, str, str]]) -> str | None:
    """Where `value` is pinned from. `reads` are (index, tool, output) of earlier reads."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        for item in value:
            source = pin_source(item, instruction, reads)
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


def pins(run: Run, writes: Sequence[bool], outputs: Sequence[str], instruction: str) -> list[ArgPin]:
    """Every argument of every write in `run`, with its pin source."""
    out: list[ArgPin] = []
    for i, action in enumerate(run.actions):
        if not writes[i]:
            continue
        reads = [(j, run.actions[j].name, outputs[j]) for j in range(i) if not writes[j]]
        for arg, value in action.args.items():
            out.append(ArgPin(i, arg, value, pin_source(value, instruction, reads)))
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
    field), or of a field named like the argument; failing that a number moves by one and a date by one day.
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
    if isinstance(value, bool) or value is None:
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
