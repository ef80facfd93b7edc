"""The intent-swap census: grade task j's reference run with task i's verifier, for every ordered pair.

Pairs are formed within a suite (a task-id prefix before "/"); the diagonal is the control.
Each off-diagonal cell gets a rung, read off the two reference runs alone:

- Rung-0, twin intent: the same calls in the same order, differing only in argument values
  (or not at all: then the tasks differ only in their answers);
- read-only: otherwise, when either reference run changes no collection (its own row, not
  Rung-3: a read-only verifier can only check the answer);
- Rung-1, sibling: both change exactly the same collections;
- Rung-2, shared effect models: the sets of changed collections overlap;
- Rung-3, disjoint: they do not overlap.

"Changes" means the oracle's diff of the reference run's end state from its clean start,
with telemetry and masked fields left out (the manifest records it per task as `effect`).

An off-diagonal pass is an acceptance, not by itself a false accept: the oracle then asks
whether task i's requested effect (its reference run's diff) is present in the end state of
task j's run. "Accepted, effect absent" is confirmed by the end state; "accepted, effect
present" is not a finding (j's run happened to do what i asks, or i asks for no change).
The swapped run keeps its own final answer (task j's): a verifier that checks only the
answer must not pass because it was handed task i's gold answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import msgspec

from verimut.core.records import Cell, CellResult, Manifest, Outcome
from verimut.engine.store import Store
from verimut.findings import summary
from verimut.findings.summary import ControlFailure
from verimut.grammar.faults import CONTROL
from verimut.grammar.pairs import RUNGS, SWAP, grid, rung, suite_of, suite_title

# The grid and its rungs live in pairs.py, so the manifest builder need not import this module;
# they are named here too, as parts of the census.
__all__ = [
    "ACCEPTED",
    "NOTE",
    "RUNGS",
    "SWAP",
    "VALID",
    "Acceptance",
    "Census",
    "build",
    "grid",
    "markdown",
    "rung",
    "suite_of",
    "suite_title",
    "write",
]

# Cells whose verdict counts toward "valid cells" (the paper's denominator).
# The census's columns: an acceptance with the requested effect present, then absent (Outcome's one grouping).
ACCEPTED = tuple(o.value for o in Outcome if o.is_swap_acceptance)
VALID = (Outcome.REJECTED.value, *ACCEPTED)
NOTE = (
    "An off-diagonal pass is an acceptance. It is a confirmed false accept only when the end "
    "state lacks the verifier's own task's requested effect (accepted, effect absent). "
    "This census is a lower bound: a zero means none found, not none exists."
)


class Acceptance(msgspec.Struct, frozen=True):
    """An off-diagonal pass: task i's verifier (`verifier_task`) passed task j's reference run (`run_task`)."""

    cell_id: str
    verifier_task: str
    run_task: str
    rung: str
    rung_reason: str
    outcome: str  # accepted, effect present or absent (ACCEPTED)
    verifier: str | None  # the verifier's own message
    effect_missing: list[str]  # what of i's requested effect the end state lacks
    effect_free_text_differs: list[str]  # present only with other free text
    requests_no_change: bool  # task i's reference run changes nothing
    run: list[str]  # the run's actions, described
    answer: str

    @property
    def confirmed(self) -> bool:
        """A confirmed false accept: accepted, with the verifier's requested effect absent."""
        return self.outcome == Outcome.ACCEPTED_EFFECT_ABSENT.value


class Census(msgspec.Struct):
    """What `verimut swap` reports: Table 1 per suite, and every off-diagonal acceptance."""

    benchmark: str
    version: str
    provenance: dict[str, str]
    manifest_hash: str
    cells: int
    scored: int
    rungs: dict[str, str]  # rung -> what it means
    # suite -> row ("control" or a rung) -> counts: cells, valid, passed, effect_present, effect_absent, ...
    table: dict[str, dict[str, dict[str, int]]]
    acceptances: list[Acceptance]
    control_failures: list[ControlFailure]
    masked: list[str]
    telemetry: list[str]
    seconds: float
    note: str = NOTE

    @property
    def false_accepts(self) -> list[Acceptance]:
        return [a for a in self.acceptances if a.confirmed]

    @property
    def exit_code(self) -> int:
        return 1 if self.false_accepts else 0


def build(m: Manifest, rows: Mapping[str, CellResult], c: float = 0.0) -> Census:
    # `c` (ProCredit's constant) is every arm's summary's argument; the census computes no rewards.
    table: dict[str, dict[str, Counter[str]]] = {}
    acceptances: list[Acceptance] = []
    failures: list[ControlFailure] = []
    for cell in m.cells:
        suite = table.setdefault(suite_of(cell.task), {})
        key = CONTROL if cell.is_control else str(cell.detail["rung"])
        counts = suite.setdefault(key, Counter())
        counts["cells"] += 1
        row = rows.get(cell.cell_id)
        if row is None:
            continue
        counts["scored"] += 1
        counts[row.outcome] += 1
        if cell.is_control:
            if row.outcome != Outcome.CONTROL_PASS.value:
                failures.append(ControlFailure(row.cell_id, row.outcome, row.reason))
            continue
        if row.outcome in VALID:
            counts["valid"] += 1
        if row.outcome in ACCEPTED:
            counts["passed"] += 1
            acceptances.append(_acceptance(m, cell, row))
    order = [CONTROL, *RUNGS]
    return Census(
        benchmark=m.benchmark,
        version=m.version,
        provenance=dict(sorted(m.provenance.items())),
        manifest_hash=m.content_hash,
        cells=len(m.cells),
        scored=len(rows),
        rungs=dict(RUNGS),
        table={s: {k: dict(rows_[k]) for k in order if k in rows_} for s, rows_ in table.items()},
        acceptances=acceptances,
        control_failures=failures,
        masked=m.masks,
        telemetry=m.telemetry,
        seconds=round(sum(r.seconds for r in rows.values()), 3),
    )


def _acceptance(m: Manifest, cell: Cell, row: CellResult) -> Acceptance:
    return Acceptance(
        cell_id=row.cell_id,
        verifier_task=cell.task,
        run_task=cell.run_task,
        rung=cell.detail["rung"],
        rung_reason=cell.detail["rung_reason"],
        outcome=row.outcome,
        verifier=row.evidence.verifier,
        effect_missing=list(row.evidence.effect_missing or []),
        effect_free_text_differs=list(row.evidence.effect_free_text_differs or []),
        requests_no_change=not m.tasks[cell.task].effect,
        run=[a.describe() for a in cell.run.actions] if cell.run else [],
        answer=cell.run.answer if cell.run else "",
    )


def _label(a: Acceptance) -> str:
    if a.confirmed:
        return "accepted, effect ABSENT"
    if a.requests_no_change:
        return "accepted, effect present (the verifier's task requests no change)"
    return "accepted, effect present"


def markdown(c: Census) -> str:
    lines = [
        *summary.header("verimut intent-swap census", c),
        (
            "Task j's reference run is replayed once from j's clean start (which the verifier of task i also "
            "gets as its start state) and graded by the verifier of task i, for every ordered pair (i, j) of a "
            "suite. The run keeps its own final answer (j's). Rungs are read off the two reference runs: "
            "Rung-0 when they make the same calls in the same order (argument values aside); otherwise "
            "read-only when either changes no collection; otherwise by the collections each changes (the "
            "oracle's diff from the clean start, telemetry and masks left out): the same (Rung-1), "
            "overlapping (Rung-2), disjoint (Rung-3)."
        ),
        "",
        "## Table 1: valid cells and verifier passes per rung",
        "",
        "| suite | rung | cells | valid | verifier passes | accepted, effect present | accepted, effect absent | other |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for suite, rows in c.table.items():
        for key, n in rows.items():
            if key == CONTROL:
                passed = n.get(Outcome.CONTROL_PASS.value, 0)
                lines.append(
                    f"| {suite_title(suite)} | Diag (control) | {n['cells']} | {n.get('scored', 0)} | {passed}/{n['cells']} pass | | | |"
                )
                continue
            other = {k: v for k, v in n.items() if k not in ("cells", "scored", "valid", "passed", *VALID)}
            lines.append(
                f"| {suite_title(suite)} | {RUNGS[key]} | {n['cells']} | {n.get('valid', 0)} | {n.get('passed', 0)} "
                f"| {n.get(ACCEPTED[0], 0)} | {n.get(ACCEPTED[1], 0)} | "
                + (", ".join(f"{k} {v}" for k, v in other.items()) or "")
                + " |"
            )
    if c.control_failures:
        lines += ["", "## Controls that FAILED (their rows and columns are unscorable)", ""]
        lines += [f"- `{f.cell_id}`: {f.outcome}: {f.reason}" for f in c.control_failures]
    lines += ["", f"## Off-diagonal acceptances: {len(c.acceptances) or 'none found'}", ""]
    lines += [
        (
            "Of these, accepted with the verifier's requested effect absent (confirmed false accepts): "
            f"{len(c.false_accepts) or 'none found'}."
        ),
        "",
    ]
    for a in c.acceptances:
        lines += [
            f"### `{a.cell_id}`: {_label(a)}",
            "",
            f"- verifier of `{a.verifier_task}` (`{a.verifier}`) passed the reference run of `{a.run_task}`",
            f"- rung {a.rung}: {a.rung_reason}",
            f"- run: {'; '.join(a.run) or '(no actions)'}; answer: {msgspec.json.encode(a.answer).decode()}",
        ]
        if a.effect_missing:
            lines.append("- missing from the end state:")
            lines += [f"  - {g}" for g in a.effect_missing]
        if a.effect_free_text_differs:
            lines.append("- present only with other free text (text the verifier's task does not pin):")
            lines += [f"  - {g}" for g in a.effect_free_text_differs]
        lines.append("")
    lines += [*summary.left_out(c.telemetry, c.masked), ""]
    return "\n".join(lines)


def write(m: Manifest, rows: Mapping[str, CellResult], store: Store, c: float = 0.0) -> Census:
    census = build(m, rows)
    store.write_summary(census, markdown(census))
    return census
