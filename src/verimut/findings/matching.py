"""What a finding is, and which cell of one audit is which cell of another: shared by `diff` and `baseline`.

A finding is a graded cell the verifier got wrong, of one of four kinds: a confirmed false accept (an edit's, or
the intent-swap census's effect-absent acceptance), a false reject, a vacuous verifier (the null run passed), and
a control failure (the unedited reference run did not pass its own verifier, so its task audited nothing).

Two audits of one benchmark are matched cell by cell: by cell id, and, for the cells left over on either side, by
the task and the content hash of the run the cell replays (`records.run_hash`), since a variant id names a
position in the reference run, which another version of the task may shift. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Found:
    """One pass over an audit (`found`): its cell ids, its cells holding a finding, and its findings per kind."""

    ids: AbstractSet[str]
    findings: dict[str, Cell]  # the cells with a finding, by id
    kept: dict[str, Cell]  # the cells asked for by id (`keep`) that hold none
    counts: dict[str, int]  # kind -> findings

    def cell(self, cell_id: str) -> Cell:
        return self.findings.get(cell_id) or self.kept[cell_id]


def found(m: Manifest, rows: Mapping[str, CellResult], keep: Container[str] = ()) -> Found:
    """Every cell id of the audit, and its cells with a finding or named in `keep`: one pass, the cells read a block
    at a time and let go (a million of them decoded at once are 1.5 GB)."""
    findings: dict[str, Cell] = {}
    kept: dict[str, Cell] = {}
    counts: dict[str, int] = dict.fromkeys(KINDS, 0)
    cells = scored = 0
    for cell in m.cells:
        row = rows.get(cell.cell_id)
        cells, scored = cells + 1, scored + (row is not None)
        k = finding(cell, row)
        if k is not None:
            counts[k] += 1
            findings[cell.cell_id] = cell
        elif cell.cell_id in keep:
            kept[cell.cell_id] = cell
    # A finished audit's ledger holds a row for each of the manifest's (unique) ids and no other: its index is then
    # the set of ids, not held a second time (a million ids are about 100 MB).
    ids = rows.keys() if scored == cells == len(rows) else {c.cell_id for c in m.cells}
    return Found(ids, findings, kept, counts)


def finding_pairs(before: Manifest, a: Found, after: Manifest, b: Found) -> Iterator[Pair]:
    """The pairs of cells of two audits of which at least one side holds a finding: the only pairs a diff reports.
    Cells are paired as each audit's cells once: by id, then those left over by task and run hash (the first
    after-cell of each run, taken once), the others alone. `a` is `found(before, ...)`, `b` is `found(after, ...,
    keep=a.findings)`. Held: the ids, the findings' cells, and the run hashes of the after-cells whose id the
    before-audit lacks (none when the ids agree); a cell needed beyond those is read in one more pass."""
    for cid, cell in a.findings.items():
        if cid in b.ids:
            yield Pair(cell, b.cell(cid), "cell_id")
    need = {cid for cid in b.findings if cid in a.ids and cid not in a.findings}
    if need:
        yield from (Pair(c, b.findings[c.cell_id], "cell_id") for c in before.cells if c.cell_id in need)
    if a.ids == b.ids:
        return
    runs_after: dict[tuple[str, str], str] = {}
    for cell in after.cells:
        if cell.cell_id not in a.ids and (h := run_hash(cell)):
            runs_after.setdefault((cell.task, h), cell.cell_id)
    taken: set[str] = set()
    wanted: dict[str, Cell] = {}  # after-cell id -> the before-cell with a finding its run matched
    for cell in before.cells:
        if cell.cell_id in b.ids:
            continue
        h = run_hash(cell)
        other = runs_after.get((cell.task, h)) if h else None
        if other is not None and other not in taken:
            taken.add(other)
            if other in b.findings:
                yield Pair(cell, b.findings[other], "run")
            elif cell.cell_id in a.findings:
                wanted[other] = cell
        elif cell.cell_id in a.findings:
            yield Pair(cell, None)
    if wanted:
        yield from (Pair(wanted[c.cell_id], c, "run") for c in after.cells if c.cell_id in wanted)
    for cid, cell in b.findings.items():
        if cid not in a.ids and cid not in taken:
            yield Pair(None, cell)


class Index:
    """The cells of a manifest that records of another audit name (by id, else by task and run hash): found in a
    pass or two over the cells, holding those cells only, not every cell by id."""

    def __init__(self, m: Manifest, names: Iterable[tuple[str, str, str]]) -> None:
        names = list(names)
        ids = {cid for cid, _, _ in names}
        self.by_id = {c.cell_id: c for c in m.cells if c.cell_id in ids}
        runs = {(task, run) for cid, task, run in names if run and cid not in self.by_id}
        self.by_run: dict[tuple[str, str], Cell] = {}
        if runs:
            tasks = {task for task, _ in runs}
            for cell in m.cells:
                if cell.task in tasks:
                    key = (cell.task, run_hash(cell))
                    if key in runs:
                        self.by_run.setdefault(key, cell)

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
