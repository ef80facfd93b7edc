"""What a verifier read, measured while it ran (docs/read-sets.md), and what that says about a difference.

A read is a path into what the verifier was given, as dotted segments (`state.slack.user_channels`,
`trace.2.args.recipient`), with how it was read:

- `value`: the value at the path was taken (a field, a record, an element);
- `keys`: the members of a collection were listed or counted (which records exist, not what they hold);
- `whole`: everything under the path was read at once (an equality, a diff, a dump, a copy).

Taking a container only to reach into it reads nothing on its own (`state.slack.channel_inbox` to get at
`.general`): what is read is what the verifier went on to take out of it.

A collection of the oracle (`oracle.state.collections`) is read when a read lands in it or below it, or
reads an ancestor whole; its members are listed when an ancestor's keys, or its own, were. Pure.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

import msgspec

from verimut.oracle.state import NEW, CollectionDiff

VALUE, KEYS, WHOLE = "value", "keys", "whole"
STATE, TRACE = "state", "trace"  # the roots a recording adapter names: the end state, the run's calls
# A provenance key an adapter sets when each task's state is its own, not one its suite's tasks share (BFCL: an
# entry's backend classes): a verifier's read map then covers only what its own runs wrote (findings/read_map.py).
OWN_STATES = "own_states"


class Reads(msgspec.Struct, frozen=True, omit_defaults=True):
    """The reads of one verifier call, each path once, by how it was read (a path read whole is not also listed
    as a value)."""

    value: list[str] = []
    keys: list[str] = []
    whole: list[str] = []

    @classmethod
    def of(cls, seen: Iterable[tuple[tuple[str, ...], str]]) -> Reads:
        by: dict[str, set[str]] = {VALUE: set(), KEYS: set(), WHOLE: set()}
        for path, how in seen:
            by[how].add(".".join(path))
        by[VALUE] -= by[WHOLE]
        return cls(value=sorted(by[VALUE]), keys=sorted(by[KEYS]), whole=sorted(by[WHOLE]))

    def merged(self, other: Reads) -> Reads:
        return Reads(
            value=sorted({*self.value, *other.value} - {*self.whole, *other.whole}),
            keys=sorted({*self.keys, *other.keys}),
            whole=sorted({*self.whole, *other.whole}),
        )

    def under(self, root: str) -> Reads:
        """The reads below one root (`state`, `trace`), the root's name taken off their paths."""

        def strip(paths: list[str]) -> list[str]:
            return [p.removeprefix(root + ".") for p in paths if p.startswith(root + ".")]

        whole = strip(self.whole) + ([""] if root in self.whole else [])
        return Reads(value=strip(self.value), keys=strip(self.keys), whole=whole)


def _inside(path: str, collection: str) -> bool:
    return collection == "" or path == collection or path.startswith(collection + ".")


def reads_collection(reads: Reads, collection: str, known: Iterable[str] = ()) -> bool:
    """Whether the verifier took anything out of `collection` (state paths, the root taken off).

    `known` are the state's other collections: a read inside one nested in `collection` (`bank_account.transactions`
    inside the fields of `bank_account`) is that one's, not `collection`'s.
    """
    nested = [k for k in known if k != collection and _inside(k, collection)]

    def lands(path: str) -> bool:
        return _inside(path, collection) and not any(_inside(path, k) for k in nested)

    if any(lands(p) for p in (*reads.value, *reads.whole)):
        return True
    if any(_inside(collection, w) for w in reads.whole):
        return True
    # A listed collection's own keys are what its records are: listing it reads which records exist.
    return collection in reads.keys


def collections_read(reads: Reads, known: Sequence[str]) -> set[str]:
    """Of the collections `known`, those the verifier took anything out of: `reads_collection` for each, in one
    pass over the reads (a read lands in the deepest known collection holding it; a whole read covers every known
    collection under it), so a state of thousands of collections is mapped in linear time, not quadratic."""
    every = set(known)
    ordered = sorted(every)
    out = {c for c in reads.keys if c in every}
    for path in (*reads.value, *reads.whole):
        segments = path.split(".")
        deepest = next((c for c in (".".join(segments[:n]) for n in range(len(segments), 0, -1)) if c in every), None)
        if deepest is not None:
            out.add(deepest)
        elif "" in every:
            out.add("")
    for w in reads.whole:
        if w == "":
            return every
        if w in every:
            out.add(w)
        under = w + "."
        for c in ordered[bisect.bisect_left(ordered, under) :]:
            if not c.startswith(under):
                break
            out.add(c)
    return out


def fields_read(reads: Reads, collection: str, known: Iterable[str] = ()) -> list[str]:
    """The fields of `collection`'s records the verifier took (`*` when it read whole records or all of it)."""
    if any(_inside(collection, w) for w in reads.whole):
        return ["*"]
    nested = [k for k in known if k != collection and _inside(k, collection)]
    found: set[str] = set()
    for p in (*reads.value, *reads.whole):
        if not p.startswith(collection + ".") or any(_inside(p, k) for k in nested):
            continue
        rest = p[len(collection) + 1 :].split(".")
        # rest[0] is a record's key (or a scalar field of a collection of fields); rest[1] its field
        # One segment: a record taken whole, or a scalar field of a collection of fields (a scalar's value)
        found.add(("*" if p in reads.whole else rest[0]) if len(rest) == 1 else rest[1])
    return sorted(found)


def records_read(reads: Reads, collection: str) -> set[str]:
    """The record keys (or list positions) of `collection` the verifier reached into."""
    out: set[str] = set()
    for p in (*reads.value, *reads.whole):
        if p.startswith(collection + "."):
            out.add(p[len(collection) + 1 :].split(".")[0])
    return out


def listed(reads: Reads, collection: str) -> bool:
    """Whether the verifier listed or counted `collection`'s records (so an added or dropped one can show)."""
    return collection in reads.keys or any(_inside(collection, w) for w in reads.whole)


def calls_read(reads: Reads) -> list[str]:
    """The run's calls the verifier looked at, by position (trace paths, the root taken off)."""
    return sorted({p.split(".")[0] for p in (*reads.value, *reads.whole) if p}, key=lambda s: (len(s), s))


def explain(
    verifier: str, reads: Reads, differs: Sequence[tuple[str, list[str], str]], known: Sequence[str] = ()
) -> str:
    """Why a verifier passed a state that differs from the reference's, from what it read.

    `differs` is, per differing collection: its name, the fields of its changed records that differ, and its
    records added or removed ("1 added", or ""); `known`, the state's collections. Each collection is either never read, or read, and then the
    part that differs is named: a field it never took, the record list it never took (it reached only for the
    records it expected), or, where it read all of that, that it read it and passed.
    """
    state = reads.under(STATE)
    never: list[str] = []
    parts: list[str] = []
    for collection, fields, membership in differs:
        if not reads_collection(state, collection, known):
            never.append(collection)
            continue
        took = fields_read(state, collection, known)
        every = "*" in took
        how = "every field" if every else ("fields " + ", ".join(took) if took else "its record list")
        why = []
        missed = [f for f in fields if not every and f not in took]
        if missed:
            why.append(f"never the differing field{'s' if len(missed) > 1 else ''} {', '.join(missed)}")
        elif fields:
            why.append(f"passed with the differing field{'s' if len(fields) > 1 else ''} {', '.join(fields)} read")
        if membership and listed(state, collection):
            why.append(f"listed its records and passed with {membership}")
        elif membership:
            keys = sorted(records_read(state, collection), key=lambda k: (len(k), k))
            shown = f"records {', '.join(keys[:5])}" + (" ..." if len(keys) > 5 else "") if keys else "no record"
            why.append(f"took only {shown}, never the record list ({membership})")
        parts.append(f"read {collection} ({how}): " + "; ".join(why or ["passed the difference there"]))
    if never:
        parts.append(f"never read {', '.join(never)}")
    calls = calls_read(reads.under(TRACE))
    if calls:
        parts.append(f"read the run's calls #{', #'.join(calls)}")
    return f"{verifier}, measured: " + "; ".join(parts)


def differing(d: CollectionDiff) -> tuple[str, list[str], str]:
    """One collection's difference as `explain` takes it: its name (as the state names it), the fields of its
    changed records that differ, and its records added or removed."""
    # A scalar record (a field of a collection of fields, `user_account.password`) differs as its key.
    fields = sorted({f if f != "value" or len(c.fields) > 1 else c.key for c in d.changed for f in c.fields})
    membership = [f"{len(d.added)} added" if d.added else "", f"{len(d.removed)} removed" if d.removed else ""]
    return d.collection.removesuffix(NEW), fields, ", ".join(m for m in membership if m)
