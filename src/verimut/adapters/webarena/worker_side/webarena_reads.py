"""What WebArena-Verified's evaluators read of the evidence, recorded while the unmodified evaluators run.

The evaluators are given the run's requests as HAR entries and its final response (a dict). Each is handed over
as a recording copy (`recording`: dict and list subclasses, so `isinstance`, equality and the package's own
`MappingProxyType` wrapping hold) that notes each key taken (`value`, for a scalar; a container taken only to
reach into it reads nothing on its own), each key tested with `in` (`value`: whether the field is there), and
each listing or count (`keys`); taking every value at once (`items()`, `values()`, a copy) reads it `whole`.

`to_state` then says which part of the end state (webarena_effects.state: `creates`, `records`, `response`) each
read lands in, by replaying the walk `state` makes over the requests:

- a write's URL is its create's `url`, or its record's `id` (the record is keyed by the URL); its method the
  create's `method` or the record's `change`; its body (`postData`) the create's `body` or the record's `fields`,
  whole; its status whether it is in the state at all (the record's `id`);
- a request that is no write (a GET), or that the site refused, is in no collection: reading it reads no state;
- the URL of every request read (the evaluators scan them all to pick the ones they grade) lists `creates` and
  `records` (`keys`): an added create or record is there for them to see;
- a key of the response is that field of `response.final`.

A record's key is its URL, whose dots would split a read's path: they are written `%2E` in paths. Headers,
cookies and response bodies of requests are not state. Standard library only.
"""

from __future__ import annotations

from typing import Any

import webarena_effects as effects

VALUE, KEYS, WHOLE = "value", "keys", "whole"
STATE = "state"
HAR, RESPONSE = "har", "response"

Seen = list[tuple[tuple[Any, ...], str]]


def recording(value: Any, path: tuple[Any, ...], seen: Seen) -> Any:
    """`value` as a recording copy when it is a dict or list (else as it is)."""
    if isinstance(value, dict):
        return _Dict(value, path, seen)
    if isinstance(value, list):
        return _List(value, path, seen)
    return value


def _taken(value: Any, path: tuple[Any, ...], seen: Seen) -> Any:
    if not isinstance(value, (dict, list)):
        seen.append((path, VALUE))
    return recording(value, path, seen)


class _Dict(dict):  # type: ignore[type-arg]
    def __init__(self, data: dict[Any, Any], path: tuple[Any, ...], seen: Seen) -> None:
        super().__init__(data)
        self._path, self._seen = path, seen

    def __getitem__(self, key: Any) -> Any:
        return _taken(super().__getitem__(key), (*self._path, key), self._seen)

    def get(self, key: Any, default: Any = None) -> Any:
        if not super().__contains__(key):
            self._seen.append(((*self._path, key), VALUE))
            return default
        return self[key]

    def __contains__(self, key: object) -> bool:
        self._seen.append(((*self._path, key), VALUE))
        return super().__contains__(key)

    def __iter__(self) -> Any:
        self._seen.append((self._path, KEYS))
        return super().__iter__()

    def keys(self) -> Any:
        self._seen.append((self._path, KEYS))
        return super().keys()

    def __len__(self) -> int:
        self._seen.append((self._path, KEYS))
        return super().__len__()

    def items(self) -> Any:
        self._seen.append((self._path, WHOLE))
        return super().items()

    def values(self) -> Any:
        self._seen.append((self._path, WHOLE))
        return super().values()

    def copy(self) -> dict[Any, Any]:
        self._seen.append((self._path, WHOLE))
        return dict(super().items())


class _List(list):  # type: ignore[type-arg]
    def __init__(self, data: list[Any], path: tuple[Any, ...], seen: Seen) -> None:
        super().__init__(data)
        self._path, self._seen = path, seen

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            self._seen.append((self._path, WHOLE))
            return super().__getitem__(index)
        n = index if index >= 0 else super().__len__() + index
        return _taken(super().__getitem__(index), (*self._path, n), self._seen)

    def __iter__(self) -> Any:
        self._seen.append((self._path, KEYS))
        for n, item in enumerate(super().__iter__()):
            yield _taken(item, (*self._path, n), self._seen)

    def __len__(self) -> int:
        self._seen.append((self._path, KEYS))
        return super().__len__()


def places(requests: list[dict[str, Any]]) -> list[tuple[str, str] | None]:
    """Where each request sits in the end state: ("creates", its key), ("records", its key), or None (no write,
    or refused): the walk of webarena_effects.state, kept in step with it."""
    out: list[tuple[str, str] | None] = []
    n = 0
    for r in requests:
        method, url, body = str(r.get("method", "GET")).upper(), str(r.get("url", "")), r.get("post_data")
        if not effects.is_write(method, url, body) or int(r.get("status") or 200) >= 400:
            out.append(None)
        elif effects.kind(method, url, body) == "create":
            out.append((effects.CREATES, str(n)))
            n += 1
        else:
            out.append((effects.RECORDS, effects.target(url).replace(".", "%2E")))
    return out


_CREATE_FIELD = {"url": "url", "method": "method", "postData": "body"}
_RECORD_FIELD = {"url": "id", "method": "change", "postData": "fields"}


def to_state(seen: Seen, requests: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The raw reads as reads of the end state ({"value", "keys", "whole"}, paths under `state`). Pure."""
    where = places(requests)
    out: list[tuple[tuple[str, ...], str]] = []
    urls: set[int] = set()
    for path, how in seen:
        if path[:1] == (RESPONSE,):
            out.append(((STATE, effects.RESPONSE, "final", *map(str, path[1:])), how))
            continue
        if path[:1] != (HAR,) or len(path) < 4 or not isinstance(path[1], int):
            continue
        i, part, name = path[1], path[2], path[3]
        if part == "request" and name == "url":
            urls.add(i)
        at = where[i] if i < len(where) else None
        if at is None:
            continue
        collection, key = at
        fields = _CREATE_FIELD if collection == effects.CREATES else _RECORD_FIELD
        if part == "request" and name in fields:
            out.append(((STATE, collection, key, fields[name]), WHOLE if name == "postData" else VALUE))
        elif part == "response" and name == "status":
            out.append(((STATE, collection, key, "id"), VALUE))
    if requests and urls >= set(range(len(requests))):
        out += [((STATE, effects.CREATES), KEYS), ((STATE, effects.RECORDS), KEYS)]
    by: dict[str, set[str]] = {VALUE: set(), KEYS: set(), WHOLE: set()}
    for p, how in out:
        by[how].add(".".join(p))
    by[VALUE] -= by[WHOLE]
    return {how: sorted(paths) for how, paths in by.items()}
