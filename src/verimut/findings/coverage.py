"""Frame coverage: the share of confirmed side effects each verifier rejects, from the manifest and ledger alone.

A side-effect cell adds a write the task never asked for (its family's `FamilySpec.side_effect`). It
is a *confirmed* side effect when its end state differs from the reference run's, i.e. its outcome is
`rejected` or `false_accept` (`Outcome.is_confirmed_change`: a harmless one changed nothing, a refused,
incomplete or unscorable one tells nothing about the verifier). A verifier's frame coverage is rejected / confirmed; with
no confirmed side effect it has none (None: "no side effect confirmed"), which is not 0 and not 1.

The verifier x collection matrix says which collections' changes a verifier notices at all: for
each collection a confirmed side effect touches (its `differs_from_reference`), the share of those
cells the verifier rejected. Pure: no I/O, no replay.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping

import msgspec

from verimut.core.benchmark import GOAL
from verimut.core.records import CellResult, Manifest, Outcome, natural
from verimut.grammar.faults import FAMILIES, spec_of
from verimut.grammar.pairs import suite_of

NO_SIDE_EFFECT = "no side effect confirmed"
USER = "user"
LOWER_BOUND = (
    "Frame coverage is a lower bound of what the grammar planted: it counts only the side effects the "
    "grammar's families ({families}) planted and the end-state check confirmed; a verifier at 1.0 "
    "rejected every one of those, not every possible side effect."
)


class Tally(msgspec.Struct, frozen=True):
    """Confirmed side effects, and how the verifier graded them."""

    side_effects: int = 0
    rejected: int = 0
    false_accepts: int = 0

    @property
    def coverage(self) -> float | None:
        return self.rejected / self.side_effects if self.side_effects else None

    def add(self, outcome: Outcome) -> Tally:
        rejected = outcome == Outcome.REJECTED
        return Tally(self.side_effects + 1, self.rejected + rejected, self.false_accepts + (not rejected))


class Verifier(msgspec.Struct, frozen=True):
    """One task's verifier."""

    suite: str
    kind: str
    side_effects: int
    rejected: int
    false_accepts: int
    coverage: float | None  # None: no side effect confirmed
    collections: dict[str, Tally]  # collection -> the confirmed side effects that touch it


class Group(msgspec.Struct, frozen=True):
    """A suite's (or a task kind's) verifiers: how many have a coverage, their median, the pooled counts."""

    verifiers: int
    with_coverage: int
    median: float | None  # over the verifiers that have a coverage; None when none has
    side_effects: int
    rejected: int
    false_accepts: int
    below_full: int  # verifiers whose coverage is below 1.0


class FrameCoverage(msgspec.Struct, frozen=True):
    families: list[str]
    verifiers: dict[str, Verifier]  # task -> its verifier's coverage, every task of the manifest
    matrix: dict[str, dict[str, float]]  # task -> collection -> share of its side effects there rejected
    suites: dict[str, Group]
    kinds: dict[str, Group]
    note: str

    @property
    def confirmed(self) -> int:
        return sum(v.side_effects for v in self.verifiers.values())

    def below_full(self) -> list[tuple[str, Verifier]]:
        """Verifiers with a coverage below 1.0, lowest first."""
        low = [(t, v) for t, v in self.verifiers.items() if v.coverage is not None and v.coverage < 1.0]
        return sorted(low, key=lambda tv: (tv[1].coverage, natural(tv[0])))


def side_effect_families() -> tuple[str, ...]:
    """The families whose spec declares a side effect, in registry order."""
    return tuple(name for name, op in FAMILIES.items() if op.spec.side_effect)


def is_confirmed(row: CellResult) -> bool:
    return spec_of(row.family).side_effect and row.outcome.is_confirmed_change and not row.unscorable


def touched(row: CellResult) -> list[str]:
    """The collections a side-effect cell's end state changes against the reference's (each once)."""
    return sorted({d.collection for d in row.evidence.differs_from_reference or []})


def share(t: Tally) -> float:
    return t.rejected / t.side_effects


def median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _group(vs: list[Verifier]) -> Group:
    covered = [v.coverage for v in vs if v.coverage is not None]
    return Group(
        verifiers=len(vs),
        with_coverage=len(covered),
        median=median(covered),
        side_effects=sum(v.side_effects for v in vs),
        rejected=sum(v.rejected for v in vs),
        false_accepts=sum(v.false_accepts for v in vs),
        below_full=sum(c < 1.0 for c in covered),
    )


def build(m: Manifest, rows: Mapping[str, CellResult]) -> FrameCoverage:
    """Every effect-contract task's verifier (a goal-contract one promises no frame condition: left out)."""

    # Two passes over the rows (each read again, none held): the tasks first, then their tallies.
    def counted(row: CellResult) -> bool:
        return is_confirmed(row) and (row.task not in m.tasks or m.tasks[row.task].contract != GOAL)

    tasks = sorted(
        {*(t for t, f in m.tasks.items() if f.contract != GOAL), *(r.task for r in rows.values() if counted(r))},
        key=natural,
    )
    total = dict.fromkeys(tasks, Tally())
    per_collection: dict[str, dict[str, Tally]] = {t: {} for t in tasks}
    for row in rows.values():
        if not counted(row):
            continue
        total[row.task] = total[row.task].add(row.outcome)
        mine = per_collection[row.task]
        for collection in touched(row):
            mine[collection] = mine.get(collection, Tally()).add(row.outcome)
    verifiers = {
        t: Verifier(
            suite=suite_of(t),
            kind=m.tasks[t].kind if t in m.tasks else USER,
            side_effects=total[t].side_effects,
            rejected=total[t].rejected,
            false_accepts=total[t].false_accepts,
            coverage=total[t].coverage,
            collections=dict(sorted(per_collection[t].items())),
        )
        for t in tasks
    }
    suites: dict[str, list[Verifier]] = {}
    kinds: dict[str, list[Verifier]] = {}
    for v in verifiers.values():
        suites.setdefault(v.suite, []).append(v)
        kinds.setdefault(v.kind, []).append(v)
    families = [f for f in side_effect_families() if f in m.families]
    return FrameCoverage(
        families=families,
        verifiers=verifiers,
        matrix={t: {c: share(n) for c, n in v.collections.items()} for t, v in verifiers.items() if v.collections},
        suites={s: _group(vs) for s, vs in suites.items()},
        kinds={k: _group(kinds[k]) for k in sorted(kinds, key=lambda k: (k != USER, k))},
        note=LOWER_BOUND.format(families=", ".join(families) or "none in this audit"),
    )


def fmt(value: float | None) -> str:
    """A coverage for people: two decimals, or why there is none.

    Rounded down, so a verifier that missed one side effect in 300 never reads as 1.00.
    """
    if value is None:
        return NO_SIDE_EFFECT
    return f"{math.floor(value * 100 + 1e-9) / 100:.2f}"  # 1e-9: 0.29 * 100 is 28.999...
