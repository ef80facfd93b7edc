"""What an AppWorld evaluator reads of the end state, recorded while the unmodified evaluator runs.

AppWorld's evaluator reads its end state through SQLAlchemy (SQLModel) from one in-memory SQLite database per app,
and compares each model's write counter (`ModelHashHandler`, kept in memory) between the start and the end. Both
are recorded for the length of one evaluation (`recording`):

- every statement an engine runs on the END databases (the live world's `to_db_home_path`), through SQLAlchemy's
  `before_cursor_execute` event on every Engine; the START databases are not the state verimut compares, and are
  left out. A SELECT names its table (the model `app.Model`) and its columns, and a WHERE on the id alone names
  the records (its parameters):
  - a count (`count(*)`) lists the model's records: `keys`;
  - a SELECT with no WHERE reads every record: with `record_hash` (AppWorld's digest of every other field) or every
    column, the model `whole`; with `id` alone, its record list (`keys`); any other choice of columns, `whole`
    (over-approximated: a blind spot can only shrink);
  - a SELECT WHERE the id is given reads those records: `whole` with `record_hash` or every column, else each
    column taken (`value`);
  - a SELECT WHERE any other column is tested reads that column of every record: the model `whole`
    (over-approximated, as above);
- every lookup of a model's write counter in the END collection's `model_hashes()` (a recording dict): which
  models were checked for having changed at all, `keys` (a table whose counter moved is then counted and its
  record digests read, by the SELECTs above).

Paths are `state.<app>.<Model>.<id>.<column>` under the snapshot's names (appworld_world.snapshot). Standard
library only at import (AppWorld and SQLAlchemy are imported inside `recording`); `reads_of` is pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

VALUE, KEYS, WHOLE = "value", "keys", "whole"
STATE = "state"

_URL = re.compile(r"file:(?P<home>[^/?]+)/(?P<app>\w+)\.db")
_FROM = re.compile(r"\bFROM\s+(\w+)", re.IGNORECASE)
_COLUMN = re.compile(r"\b(\w+)\.(\w+)\b")
_BY_ID = re.compile(
    r"^\s*(\w+)\.id\s*(=\s*\?|IN\s*\(\s*\?(\s*,\s*\?)*\s*\))\s*(LIMIT\b.*)?$", re.IGNORECASE | re.DOTALL
)
_NO_ROWS = re.compile(r"^\s*(\w+)\.id\s*IN\s*\(SELECT 1 FROM \(SELECT 1\) WHERE 1\s*!=\s*1\)\s*$", re.IGNORECASE)


def _split(statement: str) -> tuple[str, str, str]:
    """A SELECT's column list, its FROM part, and its WHERE clause (of the outermost query)."""
    s = " ".join(statement.split())
    head = re.match(r"^SELECT\s+(.*?)\s+FROM\s+(.*)$", s, re.IGNORECASE)
    if head is None:
        return "", "", ""
    columns, rest = head.group(1), head.group(2)
    depth, where = 0, ""
    for i in range(len(rest)):  # the first WHERE outside parentheses
        c = rest[i]
        depth += c == "("
        depth -= c == ")"
        if depth == 0 and rest[i : i + 7].upper() == " WHERE ":
            where = rest[i + 7 :]
            rest = rest[:i]
            break
    return columns, rest, where


def reads_of(
    statement: str, params: Any, app: str, models: dict[tuple[str, str], tuple[str, list[str]]]
) -> list[tuple[tuple[str, ...], str]]:
    """The reads of one statement on app `app`'s end database: (path, how) pairs (pure).

    `models` maps (app, table) to the model's name (`app.Model`) and its columns.
    """
    if not statement.lstrip().upper().startswith("SELECT"):
        return []
    columns, source, where = _split(statement)
    tables = [t for t in _FROM.findall("FROM " + source) if (app, t) in models]
    if not tables:
        return []
    table = tables[0]
    model, every = models[(app, table)]
    root = (STATE, *model.split("."))
    if "count(" in columns.lower():
        return [(root, KEYS)]
    taken = sorted({col for t, col in _COLUMN.findall(columns) if t == table})
    whole = "record_hash" in taken or set(every) <= set(taken)
    if not where:
        if taken == ["id"]:
            return [(root, KEYS)]
        return [(root, WHOLE)]
    if _NO_ROWS.match(where):
        return []  # `id IN ()`: SQLAlchemy's empty IN, no record taken
    by_id = _BY_ID.match(where)
    if by_id is not None and by_id.group(1) == table:
        ids = [str(p) for p in (params if isinstance(params, (list, tuple)) else [params])]
        if whole:
            return [((*root, i), WHOLE) for i in ids]
        return [((*root, i, col), VALUE) for i in ids for col in taken]
    return [(root, WHOLE)]


class _Counters(dict):  # type: ignore[type-arg]
    """A model's write counters (model -> count), noting each model looked up."""

    def __init__(self, data: dict[str, Any], seen: list[tuple[tuple[str, ...], str]]) -> None:
        super().__init__(data)
        self._seen = seen

    def __getitem__(self, key: str) -> Any:
        self._seen.append(((STATE, *str(key).split(".")), KEYS))
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._seen.append(((STATE, *str(key).split(".")), KEYS))
        return super().get(key, default)


class Recorded:
    """The reads of one evaluation, as {"value", "keys", "whole"} (verimut's core.reads.Reads in JSON terms)."""

    def __init__(self) -> None:
        self.seen: list[tuple[tuple[str, ...], str]] = []

    def reads(self) -> dict[str, list[str]]:
        by: dict[str, set[str]] = {VALUE: set(), KEYS: set(), WHOLE: set()}
        for path, how in self.seen:
            by[how].add(".".join(path))
        by[VALUE] -= by[WHOLE]
        return {how: sorted(paths) for how, paths in by.items()}


@contextmanager
def recording(end_models: Any) -> Iterator[Recorded]:
    """Record what is read of `end_models` (the live world's ModelCollection, whose databases the evaluator
    loads as its end) while the body runs."""
    from appworld.collections.models import ModelCollection
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    home = str(end_models.to_db_home_path).removeprefix(":memory:")
    models: dict[tuple[str, str], tuple[str, list[str]]] = {}
    for app, name_to_model in end_models.items():
        for name, klass in name_to_model.items():
            if name != "SQLModel" and klass.is_table_model():
                models[(app, klass.__tablename__)] = (f"{app}.{name}", list(klass.__fields__))
    out = Recorded()

    def before(conn: Any, cursor: Any, statement: str, params: Any, context: Any, executemany: bool) -> None:
        found = _URL.search(str(conn.engine.url))
        if found is not None and found.group("home") == home:
            out.seen.extend(reads_of(statement, params, found.group("app"), models))

    original = ModelCollection.model_hashes

    def model_hashes(self: Any) -> Any:
        got = original(self)
        return _Counters(got, out.seen) if str(self.to_db_home_path).removeprefix(":memory:") == home else got

    event.listen(Engine, "before_cursor_execute", before)
    ModelCollection.model_hashes = model_hashes  # type: ignore[method-assign]
    try:
        yield out
    finally:
        ModelCollection.model_hashes = original  # type: ignore[method-assign]
        event.remove(Engine, "before_cursor_execute", before)
