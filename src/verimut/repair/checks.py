"""The check language: what a repaired verifier asserts beside the original verdict, as typed data.

Each check is a frozen struct that says why a run fails it (`fails`, over the run's diffs from the clean start;
an answer check's `fails_answer`, over the run's final answer; a trace check's `fails_trace`, over the run's write
calls, for an effect only the calls hold),
and prints as its own constructor call (`AddedExactly('events', 1)`), which is how summary.md and the generated
module name it. `failures` runs checks on two snapshots; `verify` is a repaired verifier: the original verdict
AND the task's checks.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from verimut.core.benchmark import Benchmark, Verdict, resolve
from verimut.core.errors import AuditError
from verimut.core.records import TaskFacts
from verimut.core.run import Action, Run
from verimut.grammar import answers
from verimut.oracle import state as oracle


class AddedExactly(msgspec.Struct, frozen=True):
    """The run adds exactly `count` records to `collection`, as the reference run does."""

    collection: str
    count: int

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        added = len(d.added) if d else 0
        return None if added == self.count else f"{self.collection}: {added} added, expected {self.count}"

    def __str__(self) -> str:
        return f"AddedExactly({self.collection!r}, {self.count})"


class RemovedExactly(msgspec.Struct, frozen=True):
    """The run removes exactly `count` records from `collection`, as the reference run does."""

    collection: str
    count: int

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        removed = len(d.removed) if d else 0
        return None if removed == self.count else f"{self.collection}: {removed} removed, expected {self.count}"

    def __str__(self) -> str:
        return f"RemovedExactly({self.collection!r}, {self.count})"


class Unchanged(msgspec.Struct, frozen=True):
    """The run leaves `collection` as it found it (the reference run does not touch it)."""

    collection: str

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        return None if d is None else f"{self.collection}: {d.counts()}, expected no change"

    def __str__(self) -> str:
        return f"Unchanged({self.collection!r})"


class ItemsAddedExactly(msgspec.Struct, frozen=True):
    """Over the records of `collection` that change, list field `field` gains exactly `count` items.

    Items are counted as a multiset (end minus start), so a repeated item counts and reordering
    does not: the reference run's own count, whatever order a correct run adds them in.
    """

    collection: str
    field: str
    count: int

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        added = items_added(d, self.field) if d else 0
        if added == self.count:
            return None
        return f"{self.collection}[*].{self.field}: {added} items added, expected {self.count}"

    def __str__(self) -> str:
        return f"ItemsAddedExactly({self.collection!r}, {self.field!r}, {self.count})"


def items_added(d: oracle.CollectionDiff, field: str) -> int:
    """Items that list field `field` gains over the changed records of one collection diff (a multiset)."""
    total = 0
    for change in d.changed:
        before, after = change.fields.get(field, (None, None))
        if isinstance(before, list) and isinstance(after, list):
            total += sum((Counter(map(oracle.canonical, after)) - Counter(map(oracle.canonical, before))).values())
    return total


def grown_lists(d: oracle.CollectionDiff) -> dict[str, int]:
    """The list fields that the changed records of `d` grow, with the items they gain."""
    fields = {f for c in d.changed for f, (a, b) in c.fields.items() if isinstance(a, list) and isinstance(b, list)}
    return {f: n for f in sorted(fields) if (n := items_added(d, f))}


class ChangesWithin(msgspec.Struct, frozen=True):
    """In `collection`, the run changes only the records (by key) and fields the reference run changes.

    For a collection the task itself changes, so `Unchanged` cannot apply: an out-of-scope write
    that updates another record there (another scheduled payment), or another field of the same
    record (the password beside the address), is what it rejects.
    """

    collection: str
    keys: list[str]
    fields: list[str]

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        if d is None:
            return None
        keys = sorted({c.key for c in d.changed} - set(self.keys))
        fields = sorted({f for c in d.changed for f in c.fields} - set(self.fields))
        if not keys and not fields:
            return None
        what = [f"records {keys}" if keys else "", f"fields {fields}" if fields else ""]
        return f"{self.collection}: also changed {' and '.join(w for w in what if w)}, which the task does not change"

    def __str__(self) -> str:
        return f"ChangesWithin({self.collection!r}, {self.keys!r}, {self.fields!r})"


class Carries(msgspec.Struct, frozen=True):
    """Among the records the run adds to `collection` (key None), or in the record `key` it changes
    there, one carries `value` in `field` (field None: the record itself is the value).

    A postcondition: the reference run writes this value there and the task pins it, so a run
    that writes another value (a wrong amount, another recipient) did not do the task. Added
    records are matched by content, not key: their keys are often generated.
    """

    collection: str
    field: str | None
    value: Any
    key: str | None = None
    # Added records only: at least this many carry the value, as many as the reference adds
    # (three equal payments: a run that changes one of them still adds two).
    times: int = 1

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        d = diffs.get(self.collection)
        found = written(d, self.field, self.key) if d else []
        if sum(v == self.value for v in found) >= self.times:
            return None
        where = f"{self.collection}[{self.key}]" if self.key is not None else f"{self.collection} (added)"
        field = f".{self.field}" if self.field is not None else ""
        got = ", ".join(oracle.canonical(v).decode() for v in found) or "nothing"
        times = f"{self.times} x " if self.times > 1 else ""
        return f"{where}{field}: wrote {got}, expected {times}{oracle.canonical(self.value).decode()}"

    def __str__(self) -> str:
        key = "" if self.key is None else f", key={self.key!r}"
        times = "" if self.times == 1 else f", times={self.times}"
        return f"Carries({self.collection!r}, {self.field!r}, {self.value!r}{key}{times})"


def written(d: oracle.CollectionDiff, field: str | None, key: str | None) -> list[Any]:
    """The values a run writes to `field` of the records it adds to one collection (key None) or of record `key`.

    As plain data (a snapshot's datetime becomes its JSON form), as the manifest holds the reference's.
    """
    if key is not None:
        # the oracle diffs a non-dict record as its one field "value"
        got = [c.fields[field or "value"][1] for c in d.changed if c.key == key and (field or "value") in c.fields]
    else:
        records = [x["record"] if oracle.is_keyed_item(x) else x for x in d.added]
        if field is None:
            got = [r for r in records if not isinstance(r, dict)]
        else:
            got = [r[field] for r in records if isinstance(r, dict) and field in r]
    return [msgspec.to_builtins(v) for v in got]


ID_FIELDS = ("id", "id_")  # an added record's own id: generated, so no postcondition names it


def postconditions(facts: TaskFacts) -> list[Carries]:
    """One `Carries` per value the reference effect writes, free text and generated ids left out."""
    free = set(facts.free_text)

    def pinned(v: Any) -> bool:
        return not (isinstance(v, str) and v in free)

    out: dict[str, Carries] = {}  # by str: a value may be a list, unhashable
    for d in facts.effect:
        added: list[Carries] = []
        for item in d.added:
            record = item["record"] if oracle.is_keyed_item(item) else item
            if isinstance(record, dict):
                added += [Carries(d.collection, f, v) for f, v in record.items() if f not in ID_FIELDS and pinned(v)]
            elif pinned(record):
                added.append(Carries(d.collection, None, record))
        times = Counter(map(str, added))
        out |= {str(c): msgspec.structs.replace(c, times=times[str(c)]) for c in added}
        for ch in d.changed:
            for f, (_, new) in ch.fields.items():
                if pinned(new):
                    c = Carries(d.collection, f, new, ch.key)
                    out[str(c)] = c
    return list(out.values())


class AnswerStates(msgspec.Struct, frozen=True):
    """The run's final answer states `value`, a value of `kind` (number, date, name, ...), whole and in any form
    ("three", "1,050", "July 21, 2024" state 3, 1050, 2024-07-21: not "13" for 3), and no second candidate: no
    value of that kind the reference answer does not state (`allowed`), so "3 or 4" does not commit to one.

    A name is whole when no longer name holds it ("Le Baratin North" does not state "Le Baratin"); its second
    candidates are the other names the start state holds where the value sits (`rivals`: the other
    restaurants), since a capitalized word of a free answer ("Sure") is no candidate. An answer check, where the
    others are the end state's: it reads the answer (`fails_answer`), not the diffs.
    """

    kind: str
    value: str
    allowed: list[str]  # the values of `kind` the reference answer states, as written
    rivals: list[str] = []  # a name's: the start state's other names at the value's places

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        return None  # the end state is the other checks' business

    def fails_answer(self, answer: str) -> str | None:
        if not answer.strip():
            return f"the answer is empty; expected the {self.kind} {self.value!r}"
        if not self._whole(answer):
            return f"the answer does not state the {self.kind} {self.value!r} as a whole {self.kind}"
        if self.kind == answers.NAME:
            # A rival stated only inside the value or an allowed name ("Aa" in "Aa Aa") is no second name; one
            # that holds it ("Aa Aa" for "Aa") is.
            mine = [span for name in {self.value, *self.allowed} for span in _spans(name, answer)]
            others = [
                r
                for r in self.rivals
                if r not in self.allowed
                and any(not any(a <= s and e <= b for a, b in mine) for s, e in _spans(r, answer))
            ]
        else:
            meant = {answers.normal(self.kind, a) for a in self.allowed}
            others = [t for t in answers.tokens(answer, self.kind) if answers.normal(self.kind, t) not in meant]
        if others:
            return f"the answer also states the {self.kind} {others[0]!r}, which the reference answer does not"
        return None

    def _whole(self, answer: str) -> bool:
        if self.kind != answers.NAME:
            return answers.whole_token(self.value, self.kind, answer)
        # a name the answer states ends with it: words before it may open a sentence ("Try Le Baratin"), a word
        # after it makes another name
        return any(t == self.value or t.endswith(" " + self.value) for t in answers.tokens(answer, self.kind))

    def __str__(self) -> str:
        rivals = f", rivals={self.rivals!r}" if self.rivals else ""
        return f"AnswerStates({self.kind!r}, {self.value!r}, {self.allowed!r}{rivals})"


def _spans(name: str, text: str) -> list[tuple[int, int]]:
    """Where `text` states `name` whole (no word character next to it)."""
    return [m.span() for m in re.finditer(rf"(?<![\w'-]){re.escape(name)}(?![\w'-])", text)]


class CallsExactly(msgspec.Struct, frozen=True):
    """The run calls the write `tool` exactly `count` times, as the reference run does.

    A trace check: for a repeated write whose second call the compared state keeps no record of (slack's
    `post_webpage` of the same page again, which a task graded from the request log counts), so no state check
    can see it. It reads the run's write calls (`fails_trace`), not the diffs.
    """

    tool: str
    count: int

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        return None  # the end state is the other checks' business

    def fails_trace(self, calls: Sequence[Action]) -> str | None:
        made = sum(a.name == self.tool for a in calls)
        return None if made == self.count else f"{self.tool}: called {made} times, expected {self.count}"

    def __str__(self) -> str:
        return f"CallsExactly({self.tool!r}, {self.count})"


class CallsWith(msgspec.Struct, frozen=True):
    """The run's calls of the write `tool` pass exactly `values` as argument `arg` (a multiset, order aside), as
    the reference run's do.

    A trace check: for an argument the state keeps no record of (the adapter's `trace_args`: slack's invitation
    address), where a run that invites another address ends in the very state the reference does.
    """

    tool: str
    arg: str
    values: list[Any]

    def fails(self, diffs: Mapping[str, oracle.CollectionDiff]) -> str | None:
        return None  # the end state is the other checks' business

    def fails_trace(self, calls: Sequence[Action]) -> str | None:
        made = [a.args.get(self.arg) for a in calls if a.name == self.tool]
        if Counter(map(oracle.canonical, made)) == Counter(map(oracle.canonical, self.values)):
            return None
        got = ", ".join(repr(v) for v in made) or "nothing"
        return f"{self.tool}: {self.arg} {got}, expected {', '.join(repr(v) for v in self.values) or 'no call'}"

    def __str__(self) -> str:
        return f"CallsWith({self.tool!r}, {self.arg!r}, {self.values!r})"


Check = (
    AddedExactly
    | ItemsAddedExactly
    | RemovedExactly
    | Unchanged
    | ChangesWithin
    | Carries
    | AnswerStates
    | CallsExactly
    | CallsWith
)
TRACE_CHECKS = (CallsExactly, CallsWith)


def _fails(
    check: Check, diffs: Mapping[str, oracle.CollectionDiff], answer: str, calls: Sequence[Action] = ()
) -> str | None:
    if isinstance(check, AnswerStates):
        return check.fails_answer(answer)
    if isinstance(check, TRACE_CHECKS):
        return check.fails_trace(calls)
    return check.fails(diffs)


def failures(
    checks: Sequence[Check],
    start: Any,
    end: Any,
    ignore: Sequence[str],
    answer: str = "",
    calls: Sequence[Action] = (),
) -> list[str]:
    """The checks that fail from snapshot `start` to snapshot `end` (telemetry and masks ignored), the answer
    checks on the run's final answer `answer`, the trace checks on the run's write calls `calls`."""
    if not checks:
        return []
    diffs = {d.collection: d for d in oracle.compare(start, end, ignore, base=start)}
    return [why for c in checks if (why := _fails(c, diffs, answer, calls)) is not None]


def write_calls(adapter: Benchmark, run: Run) -> list[Action]:
    """The run's write calls, which the trace checks read (the adapter says which calls write)."""
    a = resolve(adapter)
    return [x for x in run.actions if a.is_write(x)]


def answer_of(adapter: Benchmark, run: Run) -> str:
    """The run's final answer where its adapter says it lives (`answer_channel`); else `Run.answer`."""
    channel = resolve(adapter).answer_channel
    return channel.read(run) if channel is not None else run.answer


def verify(
    adapter: Benchmark,
    checks: Mapping[str, Sequence[Check]],
    ignore: Sequence[str],
    task: str,
    episode: Any,
    run: Run,
    start: Any,
    run_task: str | None = None,
) -> Verdict:
    """The original verifier's verdict AND the task's checks. `start`: the clean start's snapshot.

    `run_task`: the task whose run the episode holds, when not `task` (the swap census: task j's
    run graded with task i's verifier, through the adapter's `verify_as`).
    """
    return graded(adapter, checks, ignore, task, episode, run, start, run_task)[0]


def graded(
    adapter: Benchmark,
    checks: Mapping[str, Sequence[Check]],
    ignore: Sequence[str],
    task: str,
    episode: Any,
    run: Run,
    start: Any,
    run_task: str | None = None,
) -> tuple[Verdict, list[str]]:
    """`verify`, and why each check that failed failed."""
    end = adapter.snapshot(episode)  # before the verifier, which may change the state
    if run_task is None or run_task == task:
        original = adapter.verify(episode, run)
    else:
        verify_as = resolve(adapter).verify_as
        if verify_as is None:
            raise AuditError(f"{adapter.name} cannot grade one task's run with another's verifier (no verify_as)")
        original = verify_as(task, episode, run)
    mine = checks.get(task, ())
    diffs = {d.collection: d for d in oracle.compare(start, end, ignore, base=start)} if mine else {}
    answer = answer_of(adapter, run) if any(isinstance(c, AnswerStates) for c in mine) else ""
    calls = write_calls(adapter, run) if any(isinstance(c, TRACE_CHECKS) for c in mine) else []
    why = {str(c): _fails(c, diffs, answer, calls) for c in mine}
    failed = [w for w in why.values() if w is not None]
    merged = dict(original.checks) if original.checks else {"verdict": original.passed}
    merged.update({c: w is None for c, w in why.items()})
    detail = f"{original.detail} AND repair checks" + (f" (failed: {'; '.join(failed)})" if failed else "")
    return Verdict(original.passed and not failed, detail, merged), failed


CHECK_TYPES: tuple[type, ...] = (
    AddedExactly,
    ItemsAddedExactly,
    RemovedExactly,
    Unchanged,
    ChangesWithin,
    Carries,
    AnswerStates,
    CallsExactly,
    CallsWith,
)
