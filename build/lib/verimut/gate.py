"""The CI gate: a `--fail-on` expression over an audit's counts decides the exit code.

Grammar (whitespace between tokens is ignored; keywords are lower case):

    gate       := "never" | any
    any        := all { ("," | "or") all }          -- fails the build when any part holds
    all        := comparison { "and" comparison }   -- holds when every comparison does
    comparison := counter op integer
    counter    := [ scope "." ] count
    scope      := word      -- a fault family (audit), or a suite (intent-swap census)
    count      := word      -- a count name of the arm (see COUNTS)
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
from collections.abc import Mapping
from dataclasses import dataclass

from verimut.classify import Outcome
from verimut.errors import AuditError
from verimut.manifest import Manifest
from verimut.repair import Report
from verimut.summary import Summary
from verimut.swap import Census, suite_of

DEFAULT = "false_accept>0"
NEVER = "never"
OPS = (">=", "<=", "==", "!=", ">", "<")
_WORD = r"[A-Za-z_][A-Za-z0-9_-]*"
_TOKEN = re.compile(rf"\s*(?:(?P<op>>=|<=|==|!=|>|<)|(?P<num>\d+)|(?P<word>{_WORD})|(?P<punct>[.,])|(?P<bad>\S))")

_FAULT_OUTCOMES = tuple(
    o.value for o in Outcome if o not in (Outcome.ACCEPTED_EFFECT_PRESENT, Outcome.ACCEPTED_EFFECT_ABSENT)
)
_SWAP_OUTCOMES = (
    Outcome.CONTROL_PASS.value,
    Outcome.CONTROL_FAIL.value,
    Outcome.REFUSED.value,
    Outcome.INCOMPLETE.value,
    Outcome.REJECTED.value,
    Outcome.ERROR.value,
    Outcome.ACCEPTED_EFFECT_PRESENT.value,
    Outcome.ACCEPTED_EFFECT_ABSENT.value,
)
# What each arm can count. In the intent-swap census an off-diagonal pass is an
# acceptance; only one whose requested effect is absent from the end state is a confirmed
# false accept, so there `false_accept` counts accepted_effect_absent and `acceptance`
# counts both kinds. harmless and false_reject do not exist there (no reference to equal).
# `verimut repair` counts what the repaired verifier changed (no scopes): its default gate,
# new_false_reject>0, is its exit rule before the gate.
COUNTS: dict[str, tuple[str, ...]] = {
    "fault": _FAULT_OUTCOMES,
    "swap": (*_SWAP_OUTCOMES, "acceptance", "false_accept"),
    "repair": ("new_false_reject", "still_accepted", "now_rejected", "false_accept", "regrade_mismatch"),
}
DEFAULTS = {"fault": DEFAULT, "swap": DEFAULT, "repair": "new_false_reject>0"}


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

    arm: str
    scopes: tuple[str, ...]

    @property
    def scope_kind(self) -> str:
        return {"swap": "suite", "fault": "fault family"}.get(self.arm, "scope")


def check(gate: Gate, vocab: Vocabulary, flag: str = "--fail-on") -> Gate:
    """The gate, if every name in it is one this arm counts; else a GateError naming the first that is not."""
    counts = COUNTS[vocab.arm]
    what = {"swap": "the intent-swap census", "fault": "a fault-grammar audit", "repair": "a repair"}[vocab.arm]
    for c in gate.comparisons:
        if c.count not in counts:
            raise GateError(f"{flag}: {what} has no count {c.count!r} (known: {', '.join(counts)})")
        if c.scope is not None and c.scope not in vocab.scopes:
            raise GateError(
                f"{flag}: {c.scope!r} in {c.counter!r} is not a {vocab.scope_kind} of this run "
                f"(known: {', '.join(vocab.scopes) or 'none'})"
            )
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
    out: dict[str | None, dict[str, int]] = {None: dict.fromkeys(COUNTS["fault"], 0)}
    for fam, c in per_family.items():
        out[fam] = {o: c.get(o, 0) for o in COUNTS["fault"]}
        for o in COUNTS["fault"]:
            out[None][o] += c.get(o, 0)
    return out


def swap_counts(table: Mapping[str, Mapping[str, Mapping[str, int]]]) -> dict[str | None, dict[str, int]]:
    """An intent-swap census's counts, per suite and in total (rows of a suite are summed)."""
    out: dict[str | None, dict[str, int]] = {None: dict.fromkeys(COUNTS["swap"], 0)}
    for suite, rows in table.items():
        mine = out.setdefault(suite, dict.fromkeys(COUNTS["swap"], 0))
        for row in rows.values():
            for o in _SWAP_OUTCOMES:
                mine[o] += row.get(o, 0)
        mine["false_accept"] = mine[Outcome.ACCEPTED_EFFECT_ABSENT.value]
        mine["acceptance"] = mine["false_accept"] + mine[Outcome.ACCEPTED_EFFECT_PRESENT.value]
        for k, v in mine.items():
            out[None][k] += v
    return out


def scopes_of(counts: Counts) -> tuple[str, ...]:
    return tuple(s for s in counts if s is not None)


def counts_of(result: Summary | Census) -> dict[str | None, dict[str, int]]:
    """The counts a gate reads, from an audit's summary or a census."""
    if isinstance(result, Census):
        return swap_counts(result.table)
    return fault_counts(result.counts)


def vocabulary_of(result: Summary | Census) -> Vocabulary:
    arm = "swap" if isinstance(result, Census) else "fault"
    return Vocabulary(arm, scopes_of(counts_of(result)))


def repair_counts(r: Report) -> dict[str | None, dict[str, int]]:
    """A repair's counts: the regrade of the audit with the repaired verifiers."""
    return {
        None: {
            "new_false_reject": len(r.new_false_rejects),
            "still_accepted": len(r.still_accepted),
            "now_rejected": len(r.now_rejected),
            "false_accept": r.false_accepts,
            "regrade_mismatch": len(r.regrade_mismatches),
        }
    }


def vocabulary_of_manifest(m: Manifest) -> Vocabulary:
    """What a run's gate may name, known before it is scored or summarized."""
    if m.arm == "swap":
        return Vocabulary("swap", tuple(dict.fromkeys(suite_of(t) for t in m.tasks)))
    return Vocabulary("fault", tuple(dict.fromkeys(c.family for c in m.cells)))


def read(text: str | None, vocab: Vocabulary | None = None, flag: str = "--fail-on") -> Gate:
    """The gate a command runs with: its arm's default when none is given; names checked when `vocab` is."""
    g = parse(DEFAULTS[vocab.arm if vocab else "fault"] if text is None else text, flag)
    return check(g, vocab, flag) if vocab is not None else g
