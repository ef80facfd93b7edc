"""The CI gate: a `--fail-on` expression over an audit's counts decides the exit code.

Grammar (whitespace between tokens is ignored; keywords are lower case):

    gate       := "never" | any
    any        := all { ("," | "or") all }          -- fails the build when any part holds
    all        := comparison { "and" comparison }   -- holds when every comparison does
    comparison := counter op integer
    counter    := [ scope "." ] count
    scope      := word      -- a fault family (audit), or a suite (intent-swap census)
    count      := word      -- a count name of the arm (engine/arms.py: Arm.counts)
    op         := ">" | ">=" | "<" | "<=" | "==" | "!="
    integer    := digit { digit }
    word       := letter-or-_ { letter | digit | "_" | "-" }

A counter without a scope is the total over the whole run. The default gate is
`false_accept>0`, which is what the exit code meant before there was a gate.

Parsing is pure and checks syntax only; `check` then holds the names against what one
arm's summary can count (`Vocabulary`), so a misspelt name fails before any cell is scored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from verimut.core.errors import AuditError
from verimut.core.records import CellResult, Manifest, Outcome
from verimut.engine import arms
from verimut.engine.arms import FAULT, SWAP_ARM, SWAP_OUTCOMES, Arm
from verimut.findings import diff
from verimut.findings.matching import KINDS
from verimut.findings.summary import Summary
from verimut.findings.swap import Census, suite_of

DEFAULT = "false_accept>0"
NEVER = "never"
OPS = (">=", "<=", "==", "!=", ">", "<")
_WORD = r"[A-Za-z_][A-Za-z0-9_-]*"
_TOKEN = re.compile(rf"\s*(?:(?P<op>>=|<=|==|!=|>|<)|(?P<num>\d+)|(?P<word>{_WORD})|(?P<punct>[.,])|(?P<bad>\S))")


# What each arm can count is the arm's (engine/arms.py). `verimut repair` counts what the repaired verifier
# changed (no scopes): its default gate, new_false_reject>0, is its exit rule before the gate.
@dataclass(frozen=True)
class Counted:
    """What one kind of run counts, for a gate: an arm (engine/arms.Arm has these fields) or the repair."""

    counts: tuple[str, ...]
    described: str  # "... has no count 'x'"
    scope: str  # what a scope names
    default_gate: str = DEFAULT


REPAIR = Counted(
    ("new_false_reject", "still_accepted", "now_rejected", "false_accept", "regrade_mismatch"),
    "a repair",
    "scope",
    "new_false_reject>0",
)


# `verimut diff`: a finding's kind (or `finding`, every kind) scoped by its status or by either audit
# (`opened.false_accept`, `after.vacuous`); the tasks and coverage counts have no scope (`tasks_removed>0`).
DIFF = Counted(
    (*KINDS, diff.FINDING, *diff.COVERAGE_COUNTS),
    "a diff",
    "status (opened, closed, unchanged, gone) or audit (before, after)",
    "opened.finding>0",
)
DIFF_SCOPES = (*diff.STATUSES, *diff.SIDES)


class GateError(AuditError):
    """A --fail-on expression that cannot be read or names something the run cannot count."""


@dataclass(frozen=True)
class Comparison:
    scope: str | None
    count: str
    op: str
    value: int

    @property
    def counter(self) -> str:
        return self.count if self.scope is None else f"{self.scope}.{self.count}"

    def __str__(self) -> str:
        return f"{self.counter}{self.op}{self.value}"

    def holds(self, n: int) -> bool:
        return {
            ">": n > self.value,
            ">=": n >= self.value,
            "<": n < self.value,
            "<=": n <= self.value,
            "==": n == self.value,
            "!=": n != self.value,
        }[self.op]


@dataclass(frozen=True)
class Gate:
    """Any of `any_of` holds when all of its comparisons do. No part at all: never fails."""

    any_of: tuple[tuple[Comparison, ...], ...]

    def __str__(self) -> str:
        return " or ".join(" and ".join(map(str, part)) for part in self.any_of) or NEVER

    @property
    def comparisons(self) -> list[Comparison]:
        return [c for part in self.any_of for c in part]


def _tokens(text: str, flag: str) -> list[tuple[str, str, int]]:
    """(kind, text, column) for every token; column is 1-based, as a person counts."""
    out = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # only trailing whitespace is left
            break
        kind = m.lastgroup or "bad"
        if kind == "bad":
            hint = " (compare with ==)" if m.group(kind) == "=" else ""
            raise GateError(f"{flag} {text!r}: unexpected {m.group(kind)!r} at column {m.start(kind) + 1}{hint}")
        out.append((kind, m.group(kind), m.start(kind) + 1))
        pos = m.end()
    return out


def parse(text: str, flag: str = "--fail-on") -> Gate:
    """Read a gate expression (syntax only). Raises GateError with a one-line reason."""
    toks = _tokens(text, flag)
    if not toks:
        raise GateError(f"{flag} is empty: give an expression such as {DEFAULT!r}, or {NEVER!r}")
    if len(toks) == 1 and toks[0][1] == NEVER:
        return Gate(())
    pos = 0

    def where() -> str:
        return f"at column {toks[pos][2]} ({toks[pos][1]!r})" if pos < len(toks) else "at the end"

    def fail(expected: str) -> GateError:
        return GateError(f"{flag} {text!r}: expected {expected} {where()}")

    def take(kind: str, expected: str) -> str:
        nonlocal pos
        if pos >= len(toks) or toks[pos][0] != kind or toks[pos][1] in ("or", "and", NEVER):
            raise fail(expected)
        pos += 1
        return toks[pos - 1][1]

    def comparison() -> Comparison:
        nonlocal pos
        first = take("word", "a count name such as 'false_accept'")
        scope, count = None, first
        if pos < len(toks) and toks[pos][1] == ".":
            pos += 1
            scope, count = first, take("word", "a count name after the scope")
        op = take("op", f"a comparison ({' '.join(OPS)})")
        value = take("num", "a whole number")
        return Comparison(scope, count, op, int(value))

    parts: list[tuple[Comparison, ...]] = []
    while True:
        part = [comparison()]
        while pos < len(toks) and toks[pos][1] == "and":
            pos += 1
            part.append(comparison())
        parts.append(tuple(part))
        if pos >= len(toks):
            return Gate(tuple(parts))
        if toks[pos][1] not in (",", "or"):
            raise fail("',', 'or' or 'and'")
        pos += 1


@dataclass(frozen=True)
class Vocabulary:
    """The names one run's gate may use: its arm's counts, and its scopes (families or suites)."""

    counted: Counted | Arm
    scopes: tuple[str, ...]


def check(gate: Gate, vocab: Vocabulary, flag: str = "--fail-on") -> Gate:
    """The gate, if every name in it is one this arm counts; else a GateError naming the first that is not."""
    counts, what = vocab.counted.counts, vocab.counted.described
    for c in gate.comparisons:
        if c.count not in counts:
            raise GateError(f"{flag}: {what} has no count {c.count!r} (known: {', '.join(counts)})")
        if c.scope is not None and c.scope not in vocab.scopes:
            raise GateError(
                f"{flag}: {c.scope!r} in {c.counter!r} is not a {vocab.counted.scope} of this run "
                f"(known: {', '.join(vocab.scopes) or 'none'})"
            )
    return gate


def check_diff(gate: Gate, flag: str = "--fail-on") -> Gate:
    """A diff's gate, if every name is one a diff counts and each count has the scope it needs: a finding's count
    is of a status or an audit (`opened.false_accept`), the tasks and coverage counts of neither."""
    check(gate, Vocabulary(DIFF, DIFF_SCOPES), flag)
    for c in gate.comparisons:
        if c.scope is None and c.count not in diff.COVERAGE_COUNTS:
            raise GateError(
                f"{flag}: {c.count!r} needs a scope: {', '.join(f'{s}.{c.count}' for s in DIFF_SCOPES[:2])}, ..."
            )
        if c.scope is not None and c.count in diff.COVERAGE_COUNTS:
            raise GateError(f"{flag}: {c.count!r} counts the whole diff: give it without {c.scope!r}")
    return gate


Counts = Mapping[str | None, Mapping[str, int]]  # scope (None: the whole run) -> count -> n


def fired(gate: Gate, counts: Counts) -> list[str]:
    """The parts of the gate that hold, each with the numbers that made it hold (empty: pass)."""
    out = []
    for part in gate.any_of:
        values = [counts.get(c.scope, {}).get(c.count, 0) for c in part]
        if all(c.holds(n) for c, n in zip(part, values)):
            out.append(" and ".join(f"{c} ({c.counter} = {n})" for c, n in zip(part, values)))
    return out


def fault_counts(per_family: Mapping[str, Mapping[str, int]]) -> dict[str | None, dict[str, int]]:
    """A fault-grammar summary's counts, per family and in total."""
    out: dict[str | None, dict[str, int]] = {None: dict.fromkeys(FAULT.counts, 0)}
    for fam, c in per_family.items():
        out[fam] = {o: c.get(o, 0) for o in FAULT.counts}
        for o in FAULT.counts:
            out[None][o] += c.get(o, 0)
    return out


def swap_counts(table: Mapping[str, Mapping[str, Mapping[str, int]]]) -> dict[str | None, dict[str, int]]:
    """An intent-swap census's counts, per suite and in total (rows of a suite are summed)."""
    out: dict[str | None, dict[str, int]] = {None: dict.fromkeys(SWAP_ARM.counts, 0)}
    for suite, rows in table.items():
        mine = out.setdefault(suite, dict.fromkeys(SWAP_ARM.counts, 0))
        for row in rows.values():
            for o in SWAP_OUTCOMES:
                mine[o] += row.get(o, 0)
        mine["false_accept"] = mine[Outcome.ACCEPTED_EFFECT_ABSENT.value]
        mine["acceptance"] = mine["false_accept"] + mine[Outcome.ACCEPTED_EFFECT_PRESENT.value]
        for k, v in mine.items():
            out[None][k] += v
    return out


def discount(counts: Counts, held: Iterable[CellResult], arm: Arm) -> dict[str | None, dict[str, int]]:
    """The counts less the rows a baseline holds: each in its scope (fault family, or suite) and in the total. In the
    census an effect-absent acceptance is also a `false_accept` and an `acceptance` (swap_counts)."""
    out = {scope: dict(c) for scope, c in counts.items()}
    for row in held:
        names = [row.outcome.value]
        if not arm.edits and row.outcome == Outcome.ACCEPTED_EFFECT_ABSENT:
            names += ["false_accept", "acceptance"]
        for scope in (None, row.family if arm.edits else suite_of(row.task)):
            mine = out.get(scope, {})
            for name in names:
                if mine.get(name, 0) > 0:
                    mine[name] -= 1
    return out


def scopes_of(counts: Counts) -> tuple[str, ...]:
    return tuple(s for s in counts if s is not None)


def counts_of(result: Summary | Census) -> dict[str | None, dict[str, int]]:
    """The counts a gate reads, from an audit's summary or a census."""
    if isinstance(result, Census):
        return swap_counts(result.table)
    return fault_counts(result.counts)


def vocabulary_of(result: Summary | Census) -> Vocabulary:
    return Vocabulary(SWAP_ARM if isinstance(result, Census) else FAULT, scopes_of(counts_of(result)))


def vocabulary_of_manifest(m: Manifest) -> Vocabulary:
    """What a run's gate may name, known before it is scored or summarized."""
    arm = arms.of(m)
    if arm.edits:
        return Vocabulary(arm, tuple(dict.fromkeys(c.family for c in m.cells)))
    return Vocabulary(arm, tuple(dict.fromkeys(suite_of(t) for t in m.tasks)))


def read(text: str | None, vocab: Vocabulary | None = None, flag: str = "--fail-on") -> Gate:
    """The gate a command runs with: its arm's default when none is given; names checked when `vocab` is."""
    g = parse((vocab.counted.default_gate if vocab else DEFAULT) if text is None else text, flag)
    return check(g, vocab, flag) if vocab is not None else g
