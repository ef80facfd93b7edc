"""Baselines: the findings a benchmark's authors accept, so CI fails only on what the baseline does not hold.

`verimut baseline DIR > verimut-baseline.json` writes every finding of an audit (confirmed false accepts, false
rejects, vacuous verifiers) with its cell id, the content hash of its run, its outcome and an empty `reason` for
a person to fill in; the benchmark's repository commits the file, less whatever it means to fix. `--baseline FILE`
then leaves the findings it holds out of the gate, JUnit and SARIF (there: `baselineState` unchanged, the others
new), and says which entries no longer occur, so the file can shrink.

An entry holds a finding of this audit when the cell it names (by id, else by task and run hash: ids move when a
task's reference run changes) has the entry's kind of finding. An entry whose cell is graded and is no longer that
finding is fixed; one whose run no longer exists in the audit is missing: reported, never an error, since a
benchmark's next version may drop or rewrite a task. Pure: reading and writing the file is the command line's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from verimut.core.errors import AuditError
from verimut.core.records import CONTROL, CellResult, Manifest, Outcome, run_hash
from verimut.findings.matching import Index, Kind, finding, findings, graded, kind_of

FORMAT = 1
ABOUT = (
    "verimut baseline: findings accepted for now. `verimut audit ... --baseline FILE` leaves them out of the gate, "
    "JUnit and SARIF, and names those that no longer occur. Give each a reason; remove what you mean to fix."
)


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One accepted finding."""

    cell_id: str
    task: str
    family: str
    outcome: Outcome  # as the ledger records it (a value that is no outcome is refused on reading)
    run_hash: str  # records.run_hash of the cell's run: how the entry finds its cell when the id moved
    reason: str = ""  # why it is accepted: for a person to fill in

    @property
    def kind(self) -> Kind | None:
        return kind_of(self.outcome, self.family == CONTROL)


class Baseline(msgspec.Struct, frozen=True, kw_only=True):
    verimut_baseline: int = FORMAT  # the file's format, so a later verimut can read an older file
    about: str = ABOUT
    benchmark: str
    version: str  # of the audit it was written from; a baseline applies to later versions too
    arm: str  # "fault" (verimut audit) or "swap" (verimut swap)
    findings: list[Entry]


class Match(msgspec.Struct, frozen=True):
    """A baseline held against one audit's ledger."""

    held: dict[str, Entry]  # cell id of this audit -> the entry that accepts its finding
    new: list[str]  # cell ids of this audit's findings that no entry holds
    fixed: list[Entry]  # the entry's cell was graded, and is no longer that finding: remove the entry
    missing: list[Entry]  # no cell of this audit replays the entry's run (by id or hash): reported, not an error
    ungraded: list[Entry]  # its cell is not graded here (not scored yet, or its control failed): unknown

    @property
    def gone(self) -> list[Entry]:
        """The entries that no longer occur (fixed, or their run gone): SARIF's `absent`, what the file can lose."""
        return [*self.fixed, *self.missing]


def build(m: Manifest, rows: Mapping[str, CellResult], reason: str = "") -> Baseline:
    """A baseline holding every finding of the audit (control failures apart: a task that audited nothing is
    no finding to accept, and JUnit reports it as an error, not a failure)."""
    entries = [
        Entry(
            cell_id=cell.cell_id,
            task=cell.task,
            family=cell.family,
            outcome=row.outcome,
            run_hash=run_hash(cell),
            reason=reason,
        )
        for cell, row, kind in findings(m, rows)
        if kind != "control_failure"
    ]
    return Baseline(benchmark=m.benchmark, version=m.version, arm=m.arm, findings=entries)


def decode(data: bytes, source: str) -> Baseline:
    """A baseline file's content, or an AuditError in one line naming what is wrong with it."""
    try:
        b = msgspec.json.decode(data, type=Baseline)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        why = " ".join(str(e).split())  # msgspec's messages are one line; a path in them may not be
        raise AuditError(f"{source} is not a verimut baseline: {why}") from None
    except RecursionError:  # an unknown key's value nested thousands deep: skipped, it still recurses
        raise AuditError(f"{source} is not a verimut baseline: it is nested too deeply to read") from None
    if b.verimut_baseline != FORMAT:
        raise AuditError(f"{source} is a baseline of format {b.verimut_baseline}; this verimut reads format {FORMAT}")
    for n, entry in enumerate(b.findings):
        if entry.kind is None or entry.kind == "control_failure":
            raise AuditError(
                f"{source}: findings[{n}] ({entry.cell_id}) has outcome {entry.outcome.value!r}, which is no finding "
                "(a baseline holds false_accept, accepted_effect_absent, false_reject or vacuous)"
            )
    return b


def check(b: Baseline, benchmark: str, arm: str, source: str) -> Baseline:
    """The baseline, if it is one of this benchmark and arm; else an AuditError in one line."""
    if b.benchmark != benchmark:
        raise AuditError(f"{source} is a baseline of {b.benchmark!r}, not of {benchmark!r}")
    if b.arm != arm:
        raise AuditError(f"{source} is a baseline of the {b.arm!r} arm, and this run is of the {arm!r} arm")
    return b


def match(b: Baseline, m: Manifest, rows: Mapping[str, CellResult]) -> Match:
    """Which of the audit's findings the baseline holds, and which of its entries no longer occur (pure)."""
    index = Index(m, ((e.cell_id, e.task, e.run_hash) for e in b.findings))
    held: dict[str, Entry] = {}
    fixed: list[Entry] = []
    missing: list[Entry] = []
    ungraded: list[Entry] = []
    for e in b.findings:
        cell, _ = index.find(e.cell_id, e.task, e.run_hash)
        if cell is None:
            missing.append(e)
            continue
        row = rows.get(cell.cell_id)
        if not graded(row):
            ungraded.append(e)
        elif finding(cell, row) == e.kind:
            held.setdefault(cell.cell_id, e)
        else:
            fixed.append(e)
    new = [c.cell_id for c, _, k in findings(m, rows) if k != "control_failure" and c.cell_id not in held]
    return Match(held, new, fixed, missing, ungraded)


def shrink(b: Baseline, m: Manifest, found: Match) -> Baseline:
    """The baseline less what no longer occurs, each kept entry naming its cell as this audit does (its id and run
    hash, which may have moved), its reason kept; findings it did not hold are not added."""
    by_id = {c.cell_id: c for c in m.cells if c.cell_id in found.held}  # the held ones only, not every cell
    kept = [
        msgspec.structs.replace(e, cell_id=cid, task=by_id[cid].task, run_hash=run_hash(by_id[cid]))
        for cid, e in found.held.items()
    ]
    kept += found.ungraded  # unknown here: kept, not dropped
    return msgspec.structs.replace(b, version=m.version, findings=kept)


NEW_SHOWN = 10  # new findings named in a run's output; JUnit, SARIF and the report name every one


def lines(found: Match, source: str) -> list[str]:
    """What a run with a baseline says of it, one line each."""
    held = f"{len(found.held)} finding(s) held (left out of the gate, JUnit and SARIF)"
    out = [f"baseline {source}: {held}, {len(found.new)} new"]
    if found.new:
        more = f" and {len(found.new) - NEW_SHOWN} more" if len(found.new) > NEW_SHOWN else ""
        out.append(f"baseline: new, not in the baseline: {', '.join(found.new[:NEW_SHOWN])}{more}")
    if found.fixed:
        ids = _first(found.fixed)
        out.append(f"baseline: {len(found.fixed)} baselined finding(s) no longer occur: {ids} (remove them)")
    if found.missing:
        out.append(
            f"baseline: {len(found.missing)} entry(ies) name a run this audit no longer has: {_first(found.missing)}"
        )
    if found.ungraded:
        ids = _first(found.ungraded)
        out.append(f"baseline: {len(found.ungraded)} entry(ies) name a cell not graded in this audit: {ids}")
    return out


def _first(entries: Sequence[Entry]) -> str:
    """The first NEW_SHOWN entries' ids, and how many more (400,000 stale entries made one 9 MB line)."""
    more = f" and {len(entries) - NEW_SHOWN} more" if len(entries) > NEW_SHOWN else ""
    return ", ".join(e.cell_id for e in entries[:NEW_SHOWN]) + more
