"""The diff of two audits and the baseline (findings/diff.py, baseline.py, matching.py): rules that hold for every
pair of ledgers, on generated manifests and rows (pure: no audit is run)."""

from __future__ import annotations

from collections import Counter

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verimut.cli import gate
from verimut.core.errors import AuditError
from verimut.core.records import CONTROL, Cell, CellResult, Evidence, Manifest, Outcome, TaskFacts, run_hash
from verimut.core.run import Action, Run
from verimut.engine.arms import FAULT
from verimut.findings import baseline as baseline_mod
from verimut.findings import diff as diff_mod
from verimut.findings import matching
from verimut.findings.matching import KINDS, finding

O = Outcome
# What an edited cell can come to (some findings, some not), and a control.
EDITED = [O.REJECTED, O.HARMLESS, O.REFUSED, O.FALSE_ACCEPT, O.FALSE_REJECT, O.VACUOUS, O.SAME_RUN, O.ALT_PASS]
CONTROLS = [O.CONTROL_PASS, O.CONTROL_FAIL, O.ERROR]
FAMILIES = ("extra", "wrong-value", "null-run")


def cell(task: str, family: str, variant: str, n: int) -> Cell:
    cid = f"{task}:{family}" if variant == "-" else f"{task}:{family}:{variant}"
    run = Run((Action("add", {"n": n}),)) if family != "null-run" else Run(())
    return Cell(cid, task, family, variant, run, note=f"edit {n}")


def manifest(tasks: list[str], version: str = "1", benchmark: str = "hand") -> Manifest:
    cells = []
    for t in tasks:
        cells.append(cell(t, CONTROL, "-", 0))
        cells += [cell(t, "extra", "-", 1), cell(t, "wrong-value", "0.x", 2), cell(t, "wrong-value", "1.x", 3)]
        cells.append(cell(t, "null-run", "-", 4))
    facts = TaskFacts(reference=Run((Action("add"),)), census=[], unpinned=[])
    return Manifest("test", benchmark, version, {}, list(FAMILIES), [], [], {t: facts for t in tasks}, cells)


def row(c: Cell, outcome: Outcome, unscorable: bool = False) -> CellResult:
    return CellResult(
        c.cell_id,
        "hand",
        c.task,
        c.family,
        c.variant,
        outcome,
        outcome != O.REJECTED,
        Evidence(edit=c.note),
        None,
        unscorable,
    )


@st.composite
def ledgers(draw: st.DrawFn, m: Manifest) -> dict[str, CellResult]:
    """A ledger of `m`: each cell scored with an outcome (or not scored at all, or unscorable)."""
    out = {}
    for c in m.cells:
        if draw(st.integers(0, 9)) == 0:
            continue  # not scored yet
        outcome = draw(st.sampled_from(CONTROLS if c.is_control else EDITED))
        out[c.cell_id] = row(c, outcome, unscorable=not c.is_control and draw(st.integers(0, 9)) == 0)
    return out


TASKS = st.lists(st.sampled_from([f"s/t{i}" for i in range(6)]), min_size=1, max_size=4, unique=True)


@st.composite
def pairs(draw: st.DrawFn) -> tuple[diff_mod.Audited, diff_mod.Audited]:
    """Two audits of one benchmark, over overlapping task lists (tasks added and removed)."""
    ma, mb = manifest(draw(TASKS)), manifest(draw(TASKS), "2")
    return diff_mod.Audited(ma, draw(ledgers(ma)), "a"), diff_mod.Audited(mb, draw(ledgers(mb)), "b")


@given(pairs())
def test_every_finding_of_either_audit_gets_exactly_one_status(ab):
    a, b = ab
    d = diff_mod.compare(a, b)
    for k in KINDS:
        # Each finding of the before-audit is closed, unchanged or gone; each of the after-audit opened or unchanged.
        assert d.found["before"][k] == d.counts["closed"][k] + d.counts["unchanged"][k] + d.counts["gone"][k]
        assert d.found["after"][k] == d.counts["opened"][k] + d.counts["unchanged"][k]
    assert set(d.tasks_added) == set(b.manifest.tasks) - set(a.manifest.tasks)
    assert all(c.status == "opened" for c in d.changes if c.task in d.tasks_added)
    assert all(c.status == "gone" for c in d.changes if c.task in d.tasks_removed)
    assert sum(sum(v.values()) for s in d.verifiers.values() for v in s.values()) == len(d.changes)
    # Closed means the after-audit graded the cell as something else; a cell it could not grade is gone, not closed.
    cells_b = {c.cell_id: c for c in b.manifest.cells}
    for c in d.changes:
        after = b.rows.get(c.cell_id) if c.cell_id in cells_b else None
        if c.status == "closed":
            assert after is not None and not after.unscorable and finding(cells_b[c.cell_id], after) != c.kind
        if c.status == "gone":
            assert after is None or after.unscorable


@given(st.data())
def test_an_audit_against_itself_changes_nothing(data):
    m = manifest(data.draw(TASKS))
    a = diff_mod.Audited(m, data.draw(ledgers(m)), "a")
    d = diff_mod.compare(a, a)
    assert d.opened() == 0 and not any(d.counts[s][k] for s in ("closed", "gone") for k in KINDS)
    assert d.counts["unchanged"] == d.found["before"] == d.found["after"] and d.coverage == []
    assert d.gate_counts()["opened"]["finding"] == 0


@given(st.data())
def test_swapping_the_audits_swaps_opened_and_closed_when_both_graded_every_cell(data):
    m = manifest(data.draw(TASKS))

    def graded_ledger() -> dict[str, CellResult]:
        return {
            c.cell_id: row(c, data.draw(st.sampled_from(CONTROLS[:1] if c.is_control else EDITED)), False)
            for c in m.cells
        }

    a, b = diff_mod.Audited(m, graded_ledger(), "a"), diff_mod.Audited(m, graded_ledger(), "b")
    there, back = diff_mod.compare(a, b), diff_mod.compare(b, a)
    assert there.counts["opened"] == back.counts["closed"] and there.counts["closed"] == back.counts["opened"]
    assert there.counts["unchanged"] == back.counts["unchanged"]
    assert not any(there.counts["gone"].values())
    assert [(mv.task, mv.before, mv.after) for mv in there.coverage] == [
        (mv.task, mv.after, mv.before) for mv in back.coverage
    ]


@given(st.data())
def test_cells_whose_ids_moved_are_matched_by_their_run(data):
    """A variant id names a position in the reference run: with every id moved and every run the same, the diff
    is the diff of the unmoved audits, each pair matched by run."""
    m = manifest(data.draw(TASKS))
    rows_a, rows_b = data.draw(ledgers(m)), data.draw(ledgers(m))
    renamed = {c.cell_id: c.cell_id.replace(":wrong-value:", ":wrong-value:moved-") for c in m.cells}
    mb = msgspec.structs.replace(m, cells=[msgspec.structs.replace(c, cell_id=renamed[c.cell_id]) for c in m.cells])
    moved_rows = {renamed[k]: msgspec.structs.replace(r, cell_id=renamed[k]) for k, r in rows_b.items()}
    plain = diff_mod.compare(diff_mod.Audited(m, rows_a, "a"), diff_mod.Audited(m, rows_b, "b"))
    moved = diff_mod.compare(diff_mod.Audited(m, rows_a, "a"), diff_mod.Audited(mb, moved_rows, "b"))
    assert moved.counts == plain.counts and moved.verifiers == plain.verifiers
    moved_ones = [c for c in moved.changes if ":moved-" in c.cell_id]
    assert len(moved_ones) == sum(":wrong-value:" in c.cell_id for c in plain.changes)
    for c in moved_ones:
        assert c.matched_by == "run" and c.before_cell_id == c.cell_id.replace("moved-", "")


def test_two_benchmarks_or_two_arms_are_refused():
    a, b = manifest(["s/t0"]), manifest(["s/t0"], benchmark="other")
    with pytest.raises(AuditError, match="is an audit of 'hand' and b of 'other'"):
        diff_mod.compare(diff_mod.Audited(a, {}, "a"), diff_mod.Audited(b, {}, "b"))
    swap = msgspec.structs.replace(a, arm="swap")
    with pytest.raises(AuditError, match="a diff compares two runs of one arm"):
        diff_mod.check(a, swap, "a", "b")


# ---- baselines ------------------------------------------------------------------------------------


@given(st.data())
def test_a_baseline_of_an_audit_holds_every_finding_of_it_and_reads_back(data):
    m = manifest(data.draw(TASKS))
    rows = data.draw(ledgers(m))
    b = baseline_mod.build(m, rows, reason="accepted")
    assert baseline_mod.decode(msgspec.json.encode(b), "f") == b
    found = baseline_mod.match(b, m, rows)
    expected = {c.cell_id for c in m.cells if finding(c, rows.get(c.cell_id)) not in (None, "control_failure")}
    assert set(found.held) == expected and found.new == [] and found.gone == [] and found.ungraded == []
    assert all(
        e.reason == "accepted" and e.run_hash == run_hash(next(c for c in m.cells if c.cell_id == e.cell_id))
        for e in b.findings
    )


@given(st.data())
def test_a_baseline_against_another_ledger_sorts_each_entry_once(data):
    m = manifest(data.draw(TASKS))
    b = baseline_mod.build(m, data.draw(ledgers(m)))
    rows = data.draw(ledgers(m))
    found = baseline_mod.match(b, m, rows)
    sorted_out = [*found.held.values(), *found.fixed, *found.missing, *found.ungraded]
    assert sorted(e.cell_id for e in sorted_out) == sorted(e.cell_id for e in b.findings)
    # What the audit finds is held or new, never both; a held cell has the entry's kind of finding now.
    now = {c.cell_id for c in m.cells if finding(c, rows.get(c.cell_id)) not in (None, "control_failure")}
    assert set(found.held) | set(found.new) == now and not set(found.held) & set(found.new)
    by_id = {c.cell_id: c for c in m.cells}
    assert all(finding(by_id[cid], rows[cid]) == e.kind for cid, e in found.held.items())


@given(st.data())
def test_the_gate_less_a_baseline_counts_what_the_baseline_does_not_hold(data):
    """`gate.discount` of the held rows is the count of the ledger without them, in every scope."""
    m = manifest(data.draw(TASKS))
    rows = data.draw(ledgers(m))
    held = data.draw(st.sets(st.sampled_from(sorted(rows)))) if rows else set()
    per_family: dict[str, Counter[str]] = {f: Counter() for f in (CONTROL, *FAMILIES)}
    kept: dict[str, Counter[str]] = {f: Counter() for f in (CONTROL, *FAMILIES)}
    for cid, r in rows.items():
        per_family[r.family][r.outcome] += 1
        if cid not in held:
            kept[r.family][r.outcome] += 1
    less = gate.discount(gate.fault_counts(per_family), [rows[c] for c in held], FAULT)
    assert less == gate.fault_counts(kept)


def test_a_malformed_baseline_is_one_line_naming_the_problem():
    cases = {
        b"{": "is not a verimut baseline: Input data was truncated",
        b'{"benchmark": "b", "version": "1", "arm": "fault"}': "Object missing required field `findings`",
        b'{"benchmark": "b", "version": "1", "arm": "fault", "findings": [], "verimut_baseline": 7}': "format 7",
        b'{"benchmark": "b", "version": "1", "arm": "fault", "findings": [{"cell_id": "t:extra"}]}': "missing required field",
    }
    for data, said in cases.items():
        with pytest.raises(AuditError, match=said) as e:
            baseline_mod.decode(data, "f.json")
        assert "\n" not in str(e.value) and str(e.value).startswith("f.json")
    b = baseline_mod.build(manifest(["s/t0"]), {})
    with pytest.raises(AuditError, match="is a baseline of 'hand', not of 'other'"):
        baseline_mod.check(b, "other", "fault", "f.json")


def every_pair(before: Manifest, after: Manifest) -> list[tuple[str | None, str | None, str | None]]:
    """The plain definition `matching.finding_pairs` streams (the code before it, which held every cell by id): every
    cell of either manifest once, matched by id, then the rest by (task, run hash), the others alone."""
    ids_after = {c.cell_id for c in after.cells}
    ids_before = {c.cell_id for c in before.cells}
    runs_after: dict[tuple[str, str], str] = {}
    for c in after.cells:
        if c.cell_id not in ids_before and run_hash(c):
            runs_after.setdefault((c.task, run_hash(c)), c.cell_id)
    out: list[tuple[str | None, str | None, str | None]] = [
        (c.cell_id, c.cell_id, "cell_id") for c in before.cells if c.cell_id in ids_after
    ]
    taken: set[str] = set()
    for c in before.cells:
        if c.cell_id in ids_after:
            continue
        other = runs_after.get((c.task, run_hash(c))) if run_hash(c) else None
        if other is not None and other not in taken:
            taken.add(other)
            out.append((c.cell_id, other, "run"))
        else:
            out.append((c.cell_id, None, None))
    out += [(None, c.cell_id, None) for c in after.cells if c.cell_id not in ids_before and c.cell_id not in taken]
    return out


@given(pairs(), st.data())
def test_the_streamed_pairs_are_every_pair_that_holds_a_finding(ab, data):
    """finding_pairs (two passes, holding ids and findings) pairs the cells as the whole manifests paired them,
    with ids moved (matched by run), tasks added and removed, and runs repeated (the first cell of a run taken)."""
    a, b = ab
    moved = data.draw(st.sets(st.sampled_from([c.cell_id for c in b.manifest.cells])))
    mb = msgspec.structs.replace(
        b.manifest,
        cells=[
            msgspec.structs.replace(c, cell_id=c.cell_id + ":moved") if c.cell_id in moved else c
            for c in b.manifest.cells
        ],
    )
    rows_b = {k + ":moved" if k in moved else k: r for k, r in b.rows.items()}
    fa = matching.found(a.manifest, a.rows)
    fb = matching.found(mb, rows_b, keep=fa.findings)
    streamed = [
        (p.before.cell_id if p.before else None, p.after.cell_id if p.after else None, p.matched_by)
        for p in matching.finding_pairs(a.manifest, fa, mb, fb)
    ]
    cells_a = {c.cell_id: c for c in a.manifest.cells}
    cells_b = {c.cell_id: c for c in mb.cells}
    expected = [
        (x, y, how)
        for x, y, how in every_pair(a.manifest, mb)
        if (x is not None and finding(cells_a[x], a.rows.get(x)))
        or (y is not None and finding(cells_b[y], rows_b.get(y)))
    ]
    assert sorted(streamed, key=repr) == sorted(expected, key=repr)
    assert len(streamed) == len(set(streamed))
