"""A scored cell's evidence as text: one headline, and the lines a person checks it by.

Pure functions of a manifest cell and its ledger row, shared by the CI outputs (JUnit,
SARIF) and the pytest plugin, so each says the same thing the summary does.
"""

from __future__ import annotations

from typing import Any

import msgspec

from verimut.classify import Outcome
from verimut.ledger import CellResult
from verimut.manifest import Cell

# Outcomes that are findings against the verifier (a confirmed false accept, a false reject).
FINDINGS = (Outcome.FALSE_ACCEPT.value, Outcome.ACCEPTED_EFFECT_ABSENT.value, Outcome.FALSE_REJECT.value)
CONFIRMED = (Outcome.FALSE_ACCEPT.value, Outcome.ACCEPTED_EFFECT_ABSENT.value)


def short(value: Any, limit: int = 160) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _differences(row: CellResult) -> list[dict[str, Any]]:
    return list(row.evidence.get("differs_from_reference") or [])


def headline(cell: Cell, row: CellResult) -> str:
    """One line: what happened in this cell, in the words of the report."""
    detail = row.evidence.get("verifier")
    verifier = f"the verifier ({detail})" if detail else "the verifier"
    if row.outcome == Outcome.FALSE_ACCEPT.value:
        where = "; ".join(f"{d['collection']}: {d['counts']}" for d in _differences(row))
        return f"confirmed false accept: {cell.note}; {verifier} passed, but the end state differs from the reference's ({where})"
    if row.outcome == Outcome.ACCEPTED_EFFECT_ABSENT.value:
        missing = row.evidence.get("effect_missing") or ["(unrecorded)"]
        return (
            f"confirmed false accept: {verifier} of {cell.task} passed the reference run of "
            f"{cell.run_task}, whose end state lacks its requested effect: {missing[0]}"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
        )
    if row.outcome == Outcome.FALSE_REJECT.value:
        return f"false reject: {cell.note}; the end state equals the reference's, but {verifier} failed"
    if row.reason:
        return f"{row.outcome}: {row.reason}"
    return f"{row.outcome}: {cell.note}"


def lines(cell: Cell, row: CellResult) -> list[str]:
    """The evidence, line by line: the edit, the run, the verifier, and each record that differs."""
    out = [headline(cell, row), f"cell: {cell.cell_id}", f"edit: {cell.note}"]
    if cell.run is not None:
        out.append("run: " + ("; ".join(a.describe() for a in cell.run.actions) or "(no actions)"))
        out.append(f"answer: {short(cell.run.answer)}")
    if row.evidence.get("verifier"):
        out.append(f"verifier: {row.evidence['verifier']} -> {'passed' if row.verdict else 'failed'}")
    if row.outcome == Outcome.FALSE_ACCEPT.value and row.reason:
        out.append(f"why it was missed: {row.reason}")
    diffs = _differences(row)
    if diffs:
        out.append("end state differs from the reference's:")
    for d in diffs:
        out.append(f"  {d['collection']}: {d['counts']}")
        out += [f"    added: {short(r)}" for r in d.get("added", [])[:3]]
        out += [f"    removed: {short(r)}" for r in d.get("removed", [])[:3]]
        out += [f"    changed {c['key']}: {short(c['fields'])}" for c in d.get("changed", [])[:3]]
    missing = row.evidence.get("effect_missing") or []
    if missing:
        out.append(f"missing from the end state (requested by {cell.task}):")
        out += [f"  {g}" for g in missing]
    if row.evidence.get("traceback"):
        out.append(str(row.evidence["traceback"]).rstrip())
    return out


def text(cell: Cell, row: CellResult) -> str:
    return "\n".join(lines(cell, row))
