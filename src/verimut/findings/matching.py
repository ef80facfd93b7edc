"""What a finding is, and which cell of one audit is which cell of another: shared by `diff` and `baseline`.

A finding is a graded cell the verifier got wrong, of one of four kinds: a confirmed false accept (an edit's, or
the intent-swap census's effect-absent acceptance), a false reject, a vacuous verifier (the null run passed), and
a control failure (the unedited reference run did not pass its own verifier, so its task audited nothing).

Two audits of one benchmark are matched cell by cell: by cell id, and, for the cells left over on either side, by
the task and the content hash of the run the cell replays (`records.run_hash`), since a variant id names a
position in the reference run, which another version of the task may shift. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

import msgspec

from verimut.core.records import Cell, CellResult, Manifest, Outcome, run_hash

Kind = Literal["false_accept", "false_reject", "vacuous", "control_failure"]
KINDS: tuple[Kind, ...] = ("false_accept", "false_reject", "vacuous", "control_failure")
Matched = Literal["cell_id", "run"]


def kind_of(outcome: Outcome | str, control: bool) -> Kind | None:
    """The kind of finding an outcome is (None: no finding). `control`: the cell is its task's unedited reference."""
    o = Outcome(outcome)  # (a row built by hand may hold the outcome's text)
    if control:
        # As the summary counts control failures: every control outcome but a pass (an error too: nothing audited).
        return None if o == Outcome.CONTROL_PASS else "control_failure"
    if o.is_confirmed_false_accept:
        return "false_accept"
    if o == Outcome.FALSE_REJECT:
        return "false_reject"
    if o == Outcome.VACUOUS:
        return "vacuous"
    return None


def graded(row: CellResult | None) -> bool:
    """The cell was scored and judged: not missing from the ledger, not unscorable because its control failed."""
    return row is not None and not row.unscorable


def finding(cell: Cell, row: CellResult | None) -> Kind | None:
    """The kind of finding a scored cell is, or None (not a finding, or not graded)."""
    if row is None or not graded(row):
        return None
    return kind_of(row.outcome, cell.is_control)


class Pair(msgspec.Struct, frozen=True):
    """A cell of one audit and its counterpart in the other (None: it has none), and what matched them."""

    before: Cell | None
    after: Cell | None
    matched_by: Matched | None = None

    @property
    def task(self) -> str:
        cell = self.after or self.before
        assert cell is not None
        return cell.task


def by_run(cells: list[Cell]) -> dict[tuple[str, str], Cell]:
    """(task, run hash) -> the first cell that replays that run (later cells with the same run are `same_run`:
    scored under the first, so the first is the one that carries the finding)."""
    out: dict[tuple[str, str], Cell] = {}
    for cell in cells:
        h = run_hash(cell)
        if h:
            out.setdefault((cell.task, h), cell)
    return out


def pairs(before: Manifest, after: Manifest) -> Iterator[Pair]:
    """Every cell of either manifest once: matched by id, then the rest by (task, run hash); the others alone."""
    ids_after = {c.cell_id: c for c in after.cells}
    ids_before = {c.cell_id for c in before.cells}
    left_before = [c for c in before.cells if c.cell_id not in ids_after]
    left_after = [c for c in after.cells if c.cell_id not in ids_before]
    runs_after = by_run(left_after)
    taken: set[str] = set()
    for cell in before.cells:
        if cell.cell_id in ids_after:
            yield Pair(cell, ids_after[cell.cell_id], "cell_id")
    for cell in left_before:
        h = run_hash(cell)
        other = runs_after.get((cell.task, h)) if h else None
        if other is not None and other.cell_id not in taken:
            taken.add(other.cell_id)
            yield Pair(cell, other, "run")
        else:
            yield Pair(cell, None)
    for cell in left_after:
        if cell.cell_id not in taken:
            yield Pair(None, cell)


class Index:
    """A manifest's cells by id and by (task, run hash), built once for many look-ups."""

    def __init__(self, m: Manifest) -> None:
        self.by_id = {c.cell_id: c for c in m.cells}
        self.by_run = by_run(m.cells)

    def find(self, cell_id: str, task: str, run: str) -> tuple[Cell | None, Matched | None]:
        """The cell that a record of another audit names: by id, else by its task and run hash."""
        if cell_id in self.by_id:
            return self.by_id[cell_id], "cell_id"
        found = self.by_run.get((task, run)) if run else None
        return (found, "run") if found is not None else (None, None)


def findings(m: Manifest, rows: Mapping[str, CellResult]) -> list[tuple[Cell, CellResult, Kind]]:
    """Every finding of an audit, in manifest order."""
    out = []
    for cell in m.cells:
        row = rows.get(cell.cell_id)
        k = finding(cell, row)
        if k is not None and row is not None:
            out.append((cell, row, k))
    return out
