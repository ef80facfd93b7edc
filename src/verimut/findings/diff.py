"""The diff of two audits of one benchmark: per verifier, which findings a change opened, closed or left alone.

The two audits (before and after: two versions of a benchmark, or its verifiers before and after an edit) are
matched cell by cell (`matching.finding_pairs`: by cell id, then by task and run hash), and each finding of either side
gets one status:

- opened: the after-audit has the finding and the before-audit did not (its cell graded otherwise, not graded,
  or not there at all: a new task, a new family, a run the before-audit never made). What CI fails on.
- closed: the before-audit had it, and the same cell (or run) is graded in the after-audit as something else.
- unchanged: both have it, of the same kind.
- gone: the before-audit had it and the after-audit cannot say: the task was removed, no cell replays that run,
  or its cell is not graded there (its control failed, or it is not scored yet). Not claimed closed.

Then the tasks added and removed, and every verifier whose frame coverage moved. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import msgspec

from verimut.core.errors import AuditError
from verimut.core.records import Cell, CellResult, Manifest, natural, run_hash
from verimut.engine import arms
from verimut.findings import coverage
from verimut.findings.matching import KINDS, Kind, Pair, finding, finding_pairs, found, graded

Status = Literal["opened", "closed", "unchanged", "gone"]
STATUSES: tuple[Status, ...] = ("opened", "closed", "unchanged", "gone")
SIDES = ("before", "after")  # a gate's scope may also name either audit's own counts
FINDING = "finding"  # a gate's count of every kind together
COVERAGE_COUNTS = ("tasks_added", "tasks_removed", "coverage_down", "coverage_up")
NOTE = (
    "Both audits are lower bounds: a finding closed here is one the after-audit's edits no longer find, not a "
    "proof that the loophole is gone; a finding gone is one the after-audit cannot judge (task removed, run no "
    "longer made, cell not graded)."
)


@dataclass(frozen=True)
class Audited:
    """One side of a diff: an audit's manifest and ledger, and where it was read from (for people)."""

    manifest: Manifest
    rows: Mapping[str, CellResult]
    directory: str


class Side(msgspec.Struct, frozen=True):
    directory: str
    version: str
    manifest_hash: str
    provenance: dict[str, str]
    cells: int
    scored: int


class Change(msgspec.Struct, frozen=True, omit_defaults=True):
    """One finding of either audit and its status."""

    status: Status
    kind: Kind
    task: str
    cell_id: str  # the after-audit's id when it has the cell, else the before-audit's
    family: str
    edit: str  # the cell's note: what the edit did
    run_hash: str
    why: str = ""  # why the other audit cannot judge it, or has no such cell ("" when both graded it)
    before_outcome: str | None = None  # None: no such cell, or not scored there
    after_outcome: str | None = None
    before_cell_id: str | None = None  # when the before-audit names the cell otherwise (matched by its run)
    matched_by: str | None = None  # "cell_id" or "run"; absent when the cell has no counterpart


class CoverageMove(msgspec.Struct, frozen=True):
    """A verifier of both audits whose frame coverage differs."""

    task: str
    before: float | None  # None: no side effect confirmed
    after: float | None
    before_side_effects: int
    after_side_effects: int

    @property
    def direction(self) -> str | None:
        """ "down" or "up" when both audits give the verifier a coverage; None when one has none."""
        if self.before is None or self.after is None:
            return None
        return "down" if self.after < self.before else "up"


class Diff(msgspec.Struct, frozen=True):
    benchmark: str
    arm: str
    before: Side
    after: Side
    tasks_added: list[str]
    tasks_removed: list[str]
    found: dict[str, dict[str, int]]  # "before" / "after" -> kind -> findings of that audit
    counts: dict[str, dict[str, int]]  # status -> kind -> n (every status and kind, zeros too)
    verifiers: dict[str, dict[str, dict[str, int]]]  # task -> status -> kind -> n, each task with a finding
    changes: list[Change]  # every finding of either audit: opened, closed, gone, then unchanged
    coverage: list[CoverageMove]
    note: str = NOTE

    def opened(self) -> int:
        return sum(self.counts["opened"].values())

    def gate_counts(self) -> dict[str | None, dict[str, int]]:
        """What a --fail-on expression over the diff reads: `opened.false_accept`, `after.vacuous`, `tasks_added`."""
        out: dict[str | None, dict[str, int]] = {}
        for scope, by_kind in [*self.counts.items(), *self.found.items()]:
            out[scope] = {**by_kind, FINDING: sum(by_kind.values())}
        out[None] = {
            "tasks_added": len(self.tasks_added),
            "tasks_removed": len(self.tasks_removed),
            "coverage_down": sum(m.direction == "down" for m in self.coverage),
            "coverage_up": sum(m.direction == "up" for m in self.coverage),
        }
        return out


def check(before: Manifest, after: Manifest, a: str, b: str) -> None:
    """Refuse two audits that cannot be compared, in one line."""
    if before.benchmark != after.benchmark:
        raise AuditError(
            f"{a} is an audit of {before.benchmark!r} and {b} of {after.benchmark!r}: "
            "a diff compares two audits of the same benchmark"
        )
    if before.arm != after.arm:
        raise AuditError(
            f"{a} is a {arms.of(before).title} and {b} a {arms.of(after).title}: a diff compares two runs of one arm"
        )


def _side(x: Audited) -> Side:
    m = x.manifest
    return Side(x.directory, m.version, m.content_hash, dict(sorted(m.provenance.items())), len(m.cells), len(x.rows))


def _change(p: Pair, before: Audited, after: Audited, added: set[str], removed: set[str]) -> list[Change]:
    """The statuses of the findings a pair of cells holds (none, one, or two when the kind changed)."""
    ra = before.rows.get(p.before.cell_id) if p.before else None
    rb = after.rows.get(p.after.cell_id) if p.after else None
    ka = finding(p.before, ra) if p.before else None
    kb = finding(p.after, rb) if p.after else None
    if ka is None and kb is None:
        return []
    cell = p.after or p.before
    assert cell is not None

    def make(status: Status, kind: Kind, why: str, on: Cell) -> Change:
        return Change(
            status=status,
            kind=kind,
            task=on.task,
            cell_id=on.cell_id,
            family=on.family,
            edit=on.note,
            why=why,
            run_hash=run_hash(on),
            before_outcome=ra.outcome.value if ra is not None else None,
            after_outcome=rb.outcome.value if rb is not None else None,
            before_cell_id=p.before.cell_id if p.before and p.after and p.before.cell_id != p.after.cell_id else None,
            matched_by=p.matched_by,
        )

    if ka is not None and ka == kb:
        assert p.after is not None
        return [make("unchanged", ka, "", p.after)]
    out = []
    if kb is not None:
        assert p.after is not None
        if p.after.task in added:
            why = "a task the before-audit does not have"
        elif p.before is None:
            why = "no cell of the before-audit replays this run"
        elif not graded(ra):
            why = "not graded in the before-audit"
        else:
            why = ""
        out.append(make("opened", kb, why, p.after))
    if ka is not None:
        assert p.before is not None
        if p.after is not None and graded(rb):
            out.append(make("closed", ka, "", p.after))
        elif p.before.task in removed:
            out.append(make("gone", ka, "its task is not in the after-audit", p.before))
        elif p.after is None:
            out.append(make("gone", ka, "no cell of the after-audit replays this run", p.before))
        else:
            out.append(make("gone", ka, "not graded in the after-audit", p.after))
    return out


def _coverage(before: Audited, after: Audited) -> list[CoverageMove]:
    """Every verifier of both audits whose frame coverage moved (the fault arm's; the census has none)."""
    if not arms.of(before.manifest).edits:
        return []
    a = coverage.build(before.manifest, before.rows).verifiers
    b = coverage.build(after.manifest, after.rows).verifiers
    moved = []
    for task in sorted(a.keys() & b.keys(), key=natural):
        va, vb = a[task], b[task]
        if va.coverage != vb.coverage:
            moved.append(CoverageMove(task, va.coverage, vb.coverage, va.side_effects, vb.side_effects))
    return moved


def compare(before: Audited, after: Audited) -> Diff:
    """The diff of two audits of one benchmark and arm (pure; `check` them first)."""
    check(before.manifest, after.manifest, before.directory, after.directory)
    ta, tb = set(before.manifest.tasks), set(after.manifest.tasks)
    added, removed = tb - ta, ta - tb
    # Each audit read in a pass or two (a million cells are not held at once): the ids and the findings' cells.
    a = found(before.manifest, before.rows)
    b = found(after.manifest, after.rows, keep=a.findings)
    pairs = finding_pairs(before.manifest, a, after.manifest, b)
    changes = [c for p in pairs for c in _change(p, before, after, added, removed)]
    changes.sort(key=lambda c: (STATUSES.index(c.status) if c.status != "unchanged" else 9, natural(c.cell_id)))
    counts: dict[str, dict[str, int]] = {s: dict.fromkeys(KINDS, 0) for s in STATUSES}
    verifiers: dict[str, dict[str, dict[str, int]]] = {}
    for c in changes:
        counts[c.status][c.kind] += 1
        mine = verifiers.setdefault(c.task, {}).setdefault(c.status, {})
        mine[c.kind] = mine.get(c.kind, 0) + 1
    return Diff(
        benchmark=after.manifest.benchmark,
        arm=after.manifest.arm,
        before=_side(before),
        after=_side(after),
        tasks_added=sorted(added, key=natural),
        tasks_removed=sorted(removed, key=natural),
        found={"before": a.counts, "after": b.counts},
        counts=counts,
        verifiers={t: verifiers[t] for t in sorted(verifiers, key=natural)},
        changes=changes,
        coverage=_coverage(before, after),
    )


# --- for people ------------------------------------------------------------------------------------

SHOWN = ("opened", "closed", "gone")  # the statuses listed finding by finding (unchanged: counted, in diff.json)


def kinds_text(by_kind: Mapping[str, int]) -> str:
    """ "false_accept 3, vacuous 1" (the kinds with a count), or "" when none has."""
    return ", ".join(f"{k} {n}" for k, n in by_kind.items() if n)


def moved(d: Diff) -> dict[str, dict[str, dict[str, int]]]:
    """The verifiers with a finding opened, closed or gone (unchanged ones apart)."""
    return {t: s for t, s in d.verifiers.items() if any(k in s for k in SHOWN)}


def title(d: Diff) -> str:
    a, b = d.before, d.after
    if a.version != b.version:
        return f"{d.benchmark} {a.version} → {b.version}"
    return f"{d.benchmark} {b.version}: {a.directory} → {b.directory}"


def markdown(d: Diff) -> str:
    lines = [f"# verimut diff: {title(d)}", ""]
    for name, s in (("before", d.before), ("after", d.after)):
        lines.append(
            f"- {name}: `{s.directory}` ({d.benchmark} {s.version}; manifest `{s.manifest_hash[:16]}`; "
            f"{s.scored} of {s.cells} cells scored)"
        )
    lines += ["", f"> {d.note}", "", *table_lines(d), ""]
    added = ", ".join(f"`{t}`" for t in d.tasks_added) or "none"
    removed = ", ".join(f"`{t}`" for t in d.tasks_removed) or "none"
    lines += [f"Tasks added: {added}. Tasks removed: {removed}.", ""]
    per = moved(d)
    lines += ["## Per verifier: findings opened, closed or gone", ""]
    if per:
        lines += ["| verifier | opened | closed | gone | unchanged |", "|---|---|---|---|---|"]
        for task, by in per.items():
            cols = [kinds_text(by.get(st, {})) for st in ("opened", "closed", "gone", "unchanged")]
            lines.append(f"| `{task}` | " + " | ".join(cols) + " |")
    else:
        lines.append("None: every finding of either audit is in both.")
    for status in SHOWN:
        found = [c for c in d.changes if c.status == status]
        if not found:
            continue
        lines += ["", f"## {status.capitalize()}: {len(found)}", ""]
        lines += [change_line(c) for c in found]
    lines += ["", "## Frame coverage moved", ""]
    if d.coverage:
        lines += ["| verifier | before | after | confirmed side effects (before → after) |", "|---|---|---|---|"]
        for mv in d.coverage:
            lines.append(
                f"| `{mv.task}` | {coverage.fmt(mv.before)} | {coverage.fmt(mv.after)} | "
                f"{mv.before_side_effects} → {mv.after_side_effects} |"
            )
    else:
        lines.append("No verifier of both audits moved." if arms.named(d.arm).edits else "(the census has none)")
    return "\n".join(lines) + "\n"


def table_lines(d: Diff) -> list[str]:
    """The counts table: per kind of finding, each audit's count and the statuses."""
    lines = ["| finding | before | after | opened | closed | unchanged | gone |", "|---|---|---|---|---|---|---|"]
    for k in KINDS:
        cells = [d.found["before"][k], d.found["after"][k], *(d.counts[s][k] for s in STATUSES)]
        lines.append(f"| {k} | " + " | ".join(map(str, cells)) + " |")
    return lines


def change_line(c: Change) -> str:
    """One finding's line: its id (and former id), kind, outcomes before and after, why, and its edit."""
    was = f" (before: `{c.before_cell_id}`, matched by its run)" if c.before_cell_id else ""
    outcomes = f"{c.before_outcome or '-'} → {c.after_outcome or '-'}"  # '-': no such cell, or not scored
    why = f" ({c.why})" if c.why else ""
    return f"- `{c.cell_id}`{was}: {c.kind}; {outcomes}{why}; edit: {c.edit}"
