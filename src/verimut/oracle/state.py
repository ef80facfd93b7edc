"""The end-state check: read a state as collections of records, and diff two of them.

This is the oracle, independent of any verifier's code. A snapshot is plain JSON data;
`collections` reads it as named collections of records so that a diff can say
"inbox.emails: 1 added". Everything here is pure.

How plain data becomes collections:
- a list is a collection; its records are keyed by their `id`/`id_` field when every
  element has a distinct one, and otherwise compared as a multiset (order aside);
- a dict (below the root) whose values are all dicts with the same fields is a keyed
  collection (when it has one entry, only if that looks like a record: an id, a numeric key);
- any other dict holds fields: its scalar entries are records of a collection at the
  dict's own path (keyed by field name), its container entries are read recursively.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

import msgspec

_ID_FIELDS = ("id", "id_")
# A multiset collection's records have no key; this marks them in masks and evidence.
ANY = "*"


class Collection(msgspec.Struct, frozen=True):
    """Records at one path. `keyed` collections map key -> record; others are multisets."""

    keyed: bool
    records: dict[str, Any]


class Change(msgspec.Struct, frozen=True):
    key: str
    fields: dict[str, tuple[Any, Any]]


class CollectionDiff(msgspec.Struct, frozen=True):
    """How one collection differs from `a` to `b`."""

    collection: str
    added: list[Any] = []
    removed: list[Any] = []
    changed: list[Change] = []
    reordered: bool = False

    def counts(self) -> str:
        parts = [
            f"{len(self.added)} added" if self.added else "",
            f"{len(self.removed)} removed" if self.removed else "",
            f"{len(self.changed)} changed" if self.changed else "",
            "reordered" if self.reordered else "",
        ]
        return ", ".join(p for p in parts if p)


def canonical(value: Any) -> bytes:
    return msgspec.json.encode(value, order="sorted")


def digest(snapshot: Any, ignore: Sequence[str]) -> str:
    """A short digest of a snapshot as a task sees state (`ignore`: the patterns left out, its telemetry and masks)."""
    return hashlib.sha256(canonical(apply_patterns(collections(snapshot), ignore))).hexdigest()[:16]


def _id_key(items: Sequence[Any]) -> str | None:
    for field in _ID_FIELDS:
        if items and all(isinstance(x, dict) and field in x for x in items):
            ids = [str(x[field]) for x in items]
            if len(set(ids)) == len(ids):
                return field
    return None


def _is_record_map(node: Mapping[str, Any]) -> bool:
    values = list(node.values())
    if not all(isinstance(v, dict) for v in values) or len({frozenset(v) for v in values}) > 1:
        return False
    if len(values) != 1:
        return True
    # One entry is ambiguous ({"inbox": {...}} is a field, {"7": {...}} a record): a record
    # has an id field or a numeric key.
    [(key, value)] = node.items()
    return str(key).isdigit() or any(f in value for f in _ID_FIELDS)


def collections(snapshot: Any, root: str = "") -> dict[str, Collection]:
    """Read a plain-data snapshot as collections of records, keyed by dotted path."""
    out: dict[str, Collection] = {}
    _walk(snapshot, root, out)
    return out


def _walk(node: Any, path: str, out: dict[str, Collection]) -> None:
    if isinstance(node, list):
        field = _id_key(node)
        if field is not None:
            out[path] = Collection(True, {str(x[field]): x for x in node})
        else:
            out[path] = Collection(False, {str(i): x for i, x in enumerate(node)})
    elif isinstance(node, dict):
        # The root is the state itself, never one collection of it.
        if path and _is_record_map(node):
            out[path] = Collection(True, {str(k): v for k, v in node.items()})
            return
        scalars = {str(k): v for k, v in node.items() if not isinstance(v, (dict, list))}
        if scalars:
            out[path] = Collection(True, scalars)
        for k, v in node.items():
            if isinstance(v, (dict, list)):
                _walk(v, f"{path}.{k}" if path else str(k), out)
    else:
        out[path] = Collection(True, {"value": node})


# --- masks and telemetry ---------------------------------------------------------------
# A pattern names what to leave out of comparisons:
#   "web.web_requests"              a whole collection
#   "inbox.emails[*].read"          one field of every record of a collection
#   "travel.reservation[start_time]" one record of a keyed collection
#   "files[#]"                      a keyed collection's keys (generated ids): compare as a multiset
#   "inbox.emails[+]"               keys the benchmark assigns in creation order: records the base state (a
#                                   run's start) lacks move to "inbox.emails (new)", a multiset of their content
#                                   (ids aside), so creating the same records in another order is the same
#                                   effect; records the base holds keep their keys
ASSIGNED = "+"


def _split(pattern: str) -> tuple[str, str | None, str | None]:
    """(collection glob, record key or None, field or None)."""
    if "[" not in pattern:
        return pattern, None, None
    coll, rest = pattern.split("[", 1)
    key, _, tail = rest.partition("]")
    field = tail[1:] if tail.startswith(".") else None
    return coll, key, field


def _content_key(record: Any) -> bytes:
    if isinstance(record, dict):
        return canonical({f: v for f, v in record.items() if f not in _ID_FIELDS})
    return canonical(record)


NEW = " (new)"  # the suffix of the collection holding an assigned-key collection's new records


def _split_new(coll: Collection, known: Collection | None) -> tuple[Collection, Collection]:
    """The records `known` (the base's) holds, keyed as they are, and the others as a multiset of their content
    (id fields left out): what the benchmark numbered in creation order is matched by what it holds."""
    held = known.records if known is not None and known.keyed else {}
    kept = {k: r for k, r in coll.records.items() if k in held}
    new = [
        {f: v for f, v in r.items() if f not in _ID_FIELDS} if isinstance(r, dict) else r
        for k, r in coll.records.items()
        if k not in held
    ]
    new.sort(key=canonical)
    return Collection(True, kept), Collection(False, {str(i): r for i, r in enumerate(new)})


def apply_patterns(
    colls: Mapping[str, Collection], patterns: Iterable[str], base: Mapping[str, Collection] | None = None
) -> dict[str, Collection]:
    """Drop what the patterns name (and re-key what `[+]` names, against `base`). Returns new collections."""
    parsed = [_split(p) for p in patterns]
    out: dict[str, Collection] = {}
    for path, coll in colls.items():
        rules = [(key, field) for glob, key, field in parsed if fnmatchcase(path, glob)]
        if (None, None) in rules:
            continue
        if not rules:
            out[path] = coll
            continue
        keyed = coll.keyed and ("#", None) not in rules
        drop_keys = {key for key, field in rules if field is None and key not in ("*", "#", ASSIGNED)}
        drop_fields = {field for key, field in rules if field is not None}
        records: dict[str, Any] = {}
        for key, rec in coll.records.items():
            if key in drop_keys:
                continue
            if drop_fields and isinstance(rec, dict):
                rec = {f: v for f, v in rec.items() if f not in drop_fields}
            records[key] = rec
        if not keyed:
            records = {str(i): r for i, r in enumerate(records.values())}
        coll = Collection(keyed, records)
        if (ASSIGNED, None) in rules and keyed:
            coll, new = _split_new(coll, (base or {}).get(path))
            if new.records:
                out[path + NEW] = new
        out[path] = coll
    return out


def find_masks(a: Mapping[str, Collection], b: Mapping[str, Collection]) -> set[str]:
    """Patterns for what differs between two replays of the same run (clock stamps, ids)."""
    masks: set[str] = set()
    for path in set(a) | set(b):
        if path not in a or path not in b:
            masks.add(path)
            continue
        ca, cb = a[path], b[path]
        if ca.keyed and set(ca.records) != set(cb.records):
            masks.add(f"{path}[#]")
            pairs = list(zip(ca.records.values(), cb.records.values()))
        elif ca.keyed:
            pairs = [(ca.records[k], cb.records[k]) for k in ca.records]
        else:
            if len(ca.records) != len(cb.records):
                masks.add(path)
                continue
            pairs = list(zip(ca.records.values(), cb.records.values()))
        keys = list(ca.records) if ca.keyed else [ANY] * len(pairs)
        for key, (ra, rb) in zip(keys, pairs):
            if ra == rb:
                continue
            if isinstance(ra, dict) and isinstance(rb, dict):
                masks.update(f"{path}[*].{f}" for f in set(ra) | set(rb) if ra.get(f, ...) != rb.get(f, ...))
            elif ca.keyed and key in cb.records:
                masks.add(f"{path}[{key}]")
            else:
                masks.add(path)
    return masks


# --- diff -----------------------------------------------------------------------------


def diff(a: Mapping[str, Collection], b: Mapping[str, Collection]) -> list[CollectionDiff]:
    """What changed from `a` to `b`, per collection, in path order. Empty means equal."""
    out: list[CollectionDiff] = []
    for path in sorted(set(a) | set(b)):
        ca = a.get(path, Collection(b[path].keyed if path in b else True, {}))
        cb = b.get(path, Collection(ca.keyed, {}))
        d = _diff_keyed(path, ca, cb) if ca.keyed and cb.keyed else _diff_multiset(path, ca, cb)
        if d is not None:
            out.append(d)
    return out


def _diff_keyed(path: str, ca: Collection, cb: Collection) -> CollectionDiff | None:
    ra, rb = ca.records, cb.records
    added = [{"key": k, "record": rb[k]} for k in rb if k not in ra]
    removed = [{"key": k, "record": ra[k]} for k in ra if k not in rb]
    changed: list[Change] = []
    for k in ra:
        if k in rb and ra[k] != rb[k]:
            x, y = ra[k], rb[k]
            if isinstance(x, dict) and isinstance(y, dict):
                fields = {f: (x.get(f), y.get(f)) for f in sorted(set(x) | set(y)) if x.get(f, ...) != y.get(f, ...)}
            else:
                fields = {"value": (x, y)}
            changed.append(Change(k, fields))
    if added or removed or changed:
        return CollectionDiff(path, added, removed, changed)
    return None


def _diff_multiset(path: str, ca: Collection, cb: Collection) -> CollectionDiff | None:
    xa = [canonical(r) for r in ca.records.values()]
    xb = [canonical(r) for r in cb.records.values()]
    if xa == xb:
        return None
    ma, mb = Counter(xa), Counter(xb)
    added = [msgspec.json.decode(r) for r in (mb - ma).elements()]
    removed = [msgspec.json.decode(r) for r in (ma - mb).elements()]
    return CollectionDiff(path, added, removed, reordered=not added and not removed)


def compare(a: Any, b: Any, ignore: Iterable[str], base: Any = None) -> list[CollectionDiff]:
    """Diff two snapshots, leaving out what `ignore` names (telemetry and masks). `base` is the state both
    started from (a task's clean start): the records it holds keep their assigned keys (`[+]` patterns)."""
    patterns = list(ignore)
    known = _base(base) if base is not None and any(f"[{ASSIGNED}]" in p for p in patterns) else None
    return diff(apply_patterns(collections(a), patterns, known), apply_patterns(collections(b), patterns, known))


_last_base: tuple[Any, dict[str, Collection]] | None = None


def _base(snapshot: Any) -> dict[str, Collection]:
    """collections(snapshot), kept for the last snapshot asked for: a task's cells all share its start."""
    global _last_base
    if _last_base is None or _last_base[0] is not snapshot:
        _last_base = (snapshot, collections(snapshot))
    return _last_base[1]


# --- is one effect part of another ------------------------------------------------------


def is_keyed_item(item: Any) -> bool:
    """Whether `item` is a keyed record as a diff lists it: {"key": ..., "record": ...}."""
    return isinstance(item, dict) and set(item) == {"key", "record"}


def _content(item: Any) -> bytes:
    """What identifies an added or removed record as an effect: its fields, not a generated id.

    A keyed record's key counts only when it is not just the record's own id field (a file
    name or a user name is part of the effect; transaction 8 vs 9 depends on what ran before).
    """
    if not is_keyed_item(item):
        return canonical(item)
    key, record = item["key"], item["record"]
    if isinstance(record, dict):
        is_id = any(str(record[f]) == key for f in _ID_FIELDS if f in record)
        fields = {f: v for f, v in record.items() if f not in _ID_FIELDS}
        return canonical([None if is_id else key, fields])
    return canonical([key, record])


def _loose_equal(want: Any, had: Any, free: frozenset[str]) -> bool:
    """Equal once the fields where `want` holds free text (and `had` some string) are set aside."""
    wr = want["record"] if is_keyed_item(want) else want
    hr = had["record"] if is_keyed_item(had) else had
    if not isinstance(wr, dict) or not isinstance(hr, dict) or set(wr) != set(hr):
        return False
    blank = {f for f, v in wr.items() if isinstance(v, str) and v in free and isinstance(hr[f], str)}
    if not blank:
        return False

    def aside(item: Any, record: dict[str, Any]) -> Any:
        record = {f: (None if f in blank else v) for f, v in record.items()}
        return {"key": item["key"], "record": record} if is_keyed_item(item) else record

    return _content(aside(want, wr)) == _content(aside(had, hr))


class Missing(msgspec.Struct, frozen=True):
    gaps: list[str]  # parts of the wanted effect that are absent
    loose: list[str]  # parts present only when free text is allowed to differ


def missing(have: Sequence[CollectionDiff], want: Sequence[CollectionDiff], free: Iterable[str] = ()) -> Missing:
    """The parts of effect `want` that effect `have` lacks; no gaps when `want` is contained in `have`.

    Both are diffs from a start state. Every record `want` adds (removes) must be added
    (removed) in `have` too, matched by content with generated ids left aside, each at most
    once; every field `want` changes must be changed to the same value in `have`. A reorder
    in `want` needs some difference in that collection in `have`. String values in `free`
    (free text the task does not pin) may differ: such a match is reported in `loose`.
    """
    loose_values = frozenset(free)
    by_name = {d.collection: d for d in have}
    gaps: list[str] = []
    loose: list[str] = []
    for w in want:
        h = by_name.get(w.collection, CollectionDiff(w.collection))
        for what, wanted, had in (("added", w.added, h.added), ("removed", w.removed, h.removed)):
            unused = list(had)
            contents = [_content(x) for x in unused]
            for x in wanted:
                record = x["record"] if is_keyed_item(x) else x
                c = _content(x)
                if c in contents:
                    n = contents.index(c)
                else:
                    n = next((k for k, y in enumerate(unused) if _loose_equal(x, y, loose_values)), -1)
                    if n < 0:
                        gaps.append(
                            f"{w.collection}: a record the task {what} is not {what}: {canonical(record).decode()}"
                        )
                        continue
                    loose.append(f"{w.collection}: {what}, with other free text: {canonical(unused[n]).decode()}")
                del unused[n], contents[n]
        changes = {c.key: c.fields for c in h.changed}
        for ch in w.changed:
            got = changes.get(ch.key, {})
            for field, (_, new) in ch.fields.items():
                if field in got and got[field][1] == new:
                    continue
                if field in got and isinstance(new, str) and new in loose_values and isinstance(got[field][1], str):
                    loose.append(f"{w.collection}[{ch.key}].{field}: set to other free text")
                    continue
                gaps.append(f"{w.collection}[{ch.key}].{field}: the task sets it to {canonical(new).decode()}")
        if w.reordered and w.collection not in by_name:
            gaps.append(f"{w.collection}: the task reorders it; this state leaves it as it was")
    return Missing(gaps, loose)


def strings(effect: Sequence[CollectionDiff]) -> set[str]:
    """Every string field value the effect writes (of added/removed records and changed fields)."""
    out: set[str] = set()
    for d in effect:
        for item in (*d.added, *d.removed):
            record = item["record"] if is_keyed_item(item) else item
            if isinstance(record, dict):
                out.update(v for v in record.values() if isinstance(v, str))
        for ch in d.changed:
            out.update(new for _, new in ch.fields.values() if isinstance(new, str))
    return out


def substitute(value: Any, texts: Mapping[str, str]) -> Any:
    """`value` with every occurrence of each key of `texts` replaced by its value, in every string
    and dict key: how an alternative run's own free text is put back before comparing end states."""
    if not texts:
        return value
    if isinstance(value, str):
        for old, new in texts.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [substitute(v, texts) for v in value]
    if isinstance(value, dict):
        return {substitute(k, texts): substitute(v, texts) for k, v in value.items()}
    return value


# --- effects that live in the trace -------------------------------------------------------


def _calls(actions: Iterable[Any], args_of: Any) -> Counter[bytes]:
    return Counter(canonical([a.name, args_of(a)]) for a in actions)


def trace_differs(reference: Sequence[Any], run: Sequence[Any], trace_args: Mapping[str, Sequence[str]]) -> list[str]:
    """The write calls whose trace-only arguments (`trace_args`: tool -> arguments the state keeps no record
    of, such as an invitation's address) differ between two runs' writes, as a multiset: what one run
    sends that the other does not. Empty: the same trace effects. Order aside (writes that commute)."""
    wanted = [a for a in reference if a.name in trace_args]
    made = [a for a in run if a.name in trace_args]
    if not wanted and not made:
        return []

    def args_of(a: Any) -> dict[str, Any]:
        return {k: a.args.get(k) for k in trace_args[a.name]}

    ref, got = _calls(wanted, args_of), _calls(made, args_of)
    out = [f"calls {msgspec.json.decode(x)} that the reference does not" for x in (got - ref).elements()]
    out += [f"does not call {msgspec.json.decode(x)} as the reference does" for x in (ref - got).elements()]
    return out


def writes_differ(reference: Sequence[Any], run: Sequence[Any]) -> bool:
    """Whether two runs' writes differ as a multiset of calls (name and arguments)."""
    return _calls(reference, lambda a: a.args) != _calls(run, lambda a: a.args)


def only_left_out(reference: Sequence[Any], run: Sequence[Any], idle: Sequence[Any]) -> bool:
    """Whether `run`'s writes are `reference`'s with some of `idle` left out (as multisets of calls): it makes
    no write the reference does not, and each one it lacks is idle (changed nothing where the reference made it)."""
    wanted, made = _calls(reference, lambda a: a.args), _calls(run, lambda a: a.args)
    if made - wanted:
        return False
    return not (wanted - made) - _calls(idle, lambda a: a.args)


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if len(value.strip()) >= 3 else []
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    return []


def shown(effect: Sequence[CollectionDiff], outputs: Sequence[str]) -> bool:
    """Whether some read's output shows each part of a difference: every text value of an added or removed
    record, or every old text value of a changed record, in one output. A read that shows them and returns
    the same on both ends cannot see the difference; a record no output shows was not looked at."""
    parts: list[list[str]] = []
    for d in effect:
        for item in (*d.added, *d.removed):
            parts.append(_texts(item["record"] if is_keyed_item(item) else item))
        parts += [_texts([old for old, _ in ch.fields.values()]) for ch in d.changed]
    if not parts:
        return False
    return all(texts and any(all(t in out for t in texts) for out in outputs) for texts in parts)
