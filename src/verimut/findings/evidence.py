"""A scored cell's evidence as text: one headline, and the lines a person checks it by.

Pure functions of a manifest cell and its ledger row, shared by the CI outputs (JUnit,
SARIF) and the pytest plugin, so each says the same thing the summary does.
"""

from __future__ import annotations

from typing import Any

import msgspec

from verimut.core.records import Cell, CellResult, Difference, Outcome
from verimut.grammar.faults import RESTORE, spec_of


def short(value: Any, limit: int = 160) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _differences(row: CellResult) -> list[Difference]:
    return list(row.evidence.differs_from_reference or [])


def compared(cell: Cell) -> str:
    """What the oracle found equal for a run judged correct: its end state and the reference's."""
    restored = cell.detail.get(RESTORE) if spec_of(cell.family).is_alternative else None
    up_to = (
        "once the run's own free text is put back as the reference wrote it ("
        + "; ".join(f"{short(new, 80)} -> {short(old, 80)}" for new, old in restored.items())
        + "), "
        if restored
        else ""
    )
    return (
        f"the end state equals the reference run's, {up_to}record by record "
        "(telemetry and masked fields left out: they record reads, or differ between two replays)"
    )


def headline(cell: Cell, row: CellResult) -> str:
    """One line: what happened in this cell, in the words of the report."""
    detail = row.evidence.verifier
    verifier = f"the verifier ({detail})" if detail else "the verifier"
    if row.outcome == Outcome.FALSE_ACCEPT.value:
        where = "; ".join(f"{d.collection}: {d.counts}" for d in _differences(row))
        return f"confirmed false accept: {cell.note}; {verifier} passed, but the end state differs from the reference's ({where})"
    if row.outcome == Outcome.ACCEPTED_EFFECT_ABSENT.value:
        missing = row.evidence.effect_missing or ["(unrecorded)"]
        return (
            f"confirmed false accept: {verifier} of {cell.task} passed the reference run of "
            f"{cell.run_task}, whose end state lacks its requested effect: {missing[0]}"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
        )
    if row.outcome == Outcome.FALSE_REJECT.value:
        route = "a correct run by another route: " if spec_of(cell.family).is_alternative else ""
        same = "equals the reference's" + (" up to its reworded text" if cell.detail.get(RESTORE) else "")
        return f"false reject: {route}{cell.note}; the end state {same}, but {verifier} failed"
    if row.reason:
        return f"{row.outcome}: {row.reason}"
    return f"{row.outcome}: {cell.note}"


def lines(cell: Cell, row: CellResult) -> list[str]:
    """The evidence, line by line: the edit, the run, the verifier, and each record that differs."""
    out = [headline(cell, row), f"cell: {cell.cell_id}", f"edit: {cell.note}"]
    if cell.run is not None:
        out.append("run: " + ("; ".join(a.describe() for a in cell.run.actions) or "(no actions)"))
        out.append(f"answer: {short(cell.run.answer)}")
    if "reference_answer" in cell.detail:  # an answer family's cell: what the answer was before the edit
        out.append(f"reference answer: {short(cell.detail['reference_answer'])}")
    if row.evidence.answer_differs:
        out.append(f"answer differs: {row.evidence.answer_differs}")
    if row.evidence.verifier:
        out.append(f"verifier: {row.evidence.verifier} -> {'passed' if row.verdict else 'failed'}")
    failing = [name for name, ok in (row.evidence.checks or {}).items() if not ok]
    if failing:
        out.append("failing checks: " + ", ".join(failing))
    if Outcome(row.outcome).is_judged_correct:  # (a row built by hand may hold the outcome's text)
        out.append(f"oracle: {compared(cell)}")
    if row.outcome == Outcome.FALSE_ACCEPT.value and row.reason:
        out.append(f"why it was missed: {row.reason}")
    diffs = _differences(row)
    if diffs:
        out.append("end state differs from the reference's:")
    for d in diffs:
        out.append(f"  {d.collection}: {d.counts}")
        out += [f"    added: {short(r)}" for r in d.added[:3]]
        out += [f"    removed: {short(r)}" for r in d.removed[:3]]
        out += [f"    changed {c.key}: {short(c.fields)}" for c in d.changed[:3]]
    missing = row.evidence.effect_missing or []
    if missing:
        out.append(f"missing from the end state (requested by {cell.task}):")
        out += [f"  {g}" for g in missing]
    if row.evidence.traceback:
        out.append(row.evidence.traceback.rstrip())
    return out


def text(cell: Cell, row: CellResult) -> str:
    return "\n".join(lines(cell, row))
