"""Frame coverage (coverage.py): the share of confirmed side effects each verifier rejects.

Unit tests on hand-made ledger rows, properties over generated rows, the summary's and the
terminal's table, and report.html's heat map in headless Chromium, on tests/coveragebench.py:
the same tasks under a verifier that checks only its own record (coverage 0.0) and one that
compares the whole state (coverage 1.0).
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from browser import load
from conftest import ROOT, verimut
from verimut.core.records import Cell, CellResult, Difference, Evidence, Manifest, Outcome, TaskFacts
from verimut.core.run import Action, Run
from verimut.findings import coverage
from verimut.findings import summary as summary_mod
from verimut.outputs import reproduce

O = Outcome
SE = coverage.side_effect_families()


def facts(kind: str = "user") -> TaskFacts:
    return TaskFacts(reference=Run((Action("add"),)), census=[], unpinned=[], kind=kind)


def manifest(tasks: dict[str, str], families: tuple[str, ...] = ("omit", "extra", "extra-ni")) -> Manifest:
    return Manifest(
        verimut="test",
        benchmark="hand",
        version="1",
        provenance={},
        families=list(families),
        telemetry=[],
        masks=[],
        tasks={t: facts(k) for t, k in tasks.items()},
        cells=[],
    )


def row(
    task: str,
    family: str,
    outcome: Outcome,
    touches: tuple[str, ...] = ("items",),
    n: int = 0,
    unscorable: bool = False,
) -> CellResult:
    return CellResult(
        cell_id=f"{task}:{family}:{n}",
        benchmark="hand",
        task=task,
        family=family,
        variant=str(n),
        outcome=outcome,
        verdict=outcome in (O.FALSE_ACCEPT, O.HARMLESS, O.CONTROL_PASS),
        evidence=Evidence(
            edit="", differs_from_reference=[Difference(counts="1 added", collection=c) for c in touches]
        ),
        unscorable=unscorable,
    )


def ledger(*rows: CellResult) -> dict[str, CellResult]:
    assert len({r.cell_id for r in rows}) == len(rows)
    return {r.cell_id: r for r in rows}


# --- hand-made rows --------------------------------------------------------------------------------


def test_coverage_is_the_share_of_confirmed_side_effects_rejected():
    m = manifest({"s/a": "user", "s/b": "user", "s/c": "user"})
    rows = ledger(
        row("s/a", "extra", O.REJECTED, ("items",), 0),
        row("s/a", "extra-ni", O.FALSE_ACCEPT, ("items", "log"), 1),
        row("s/a", "extra-oos", O.REJECTED, ("mail",), 2),
        row("s/a", "extra", O.HARMLESS, ("items",), 3),  # changed nothing: not a side effect
        row("s/a", "omit", O.FALSE_ACCEPT, ("items",), 4),  # not a side-effect family
        row("s/b", "extra", O.REFUSED, (), 0),
        row("s/b", "extra", O.ERROR, ("items",), 1),
        row("s/c", "extra", O.FALSE_ACCEPT, ("items",), 0),
    )
    fc = coverage.build(m, rows)
    a, b, c = fc.verifiers["s/a"], fc.verifiers["s/b"], fc.verifiers["s/c"]
    assert (a.side_effects, a.rejected, a.false_accepts) == (3, 2, 1)
    assert a.coverage == 2 / 3
    assert fc.matrix["s/a"] == {"items": 0.5, "log": 0.0, "mail": 1.0}
    assert a.collections["items"] == coverage.Tally(side_effects=2, rejected=1, false_accepts=1)
    assert (b.side_effects, b.coverage) == (0, None)  # none confirmed: no coverage, not 0 and not 1
    assert "s/b" not in fc.matrix
    assert c.coverage == 0.0
    s = fc.suites["s"]
    assert (s.verifiers, s.with_coverage, s.below_full) == (3, 2, 2)
    assert s.median == statistics.median([2 / 3, 0.0])  # b, without a coverage, is left out
    assert (s.side_effects, s.rejected, s.false_accepts) == (4, 2, 2)


def test_an_unscorable_cell_is_no_side_effect():
    # A failed control leaves no correct run to compare with: the task's cells say nothing.
    fc = coverage.build(manifest({"s/a": "user"}), ledger(row("s/a", "extra", O.REJECTED, unscorable=True)))
    assert fc.verifiers["s/a"].coverage is None


def test_suites_and_kinds_are_reported_apart():
    m = manifest({"bank/user_task_0": "user", "bank/injection_task_0": "injection", "mail/user_task_0": "user"})
    rows = ledger(
        row("bank/user_task_0", "extra", O.FALSE_ACCEPT),
        row("bank/injection_task_0", "extra", O.REJECTED),
        row("mail/user_task_0", "extra", O.REJECTED, n=1),
        row("mail/user_task_0", "extra-ni", O.REJECTED, n=2),
    )
    fc = coverage.build(m, rows)
    assert {k: g.median for k, g in fc.suites.items()} == {"bank": 0.5, "mail": 1.0}
    assert list(fc.kinds) == ["user", "injection"]  # user tasks first
    assert fc.kinds["user"].median == 0.5 and fc.kinds["injection"].median == 1.0
    assert fc.verifiers["bank/injection_task_0"].kind == "injection"
    assert [t for t, _ in fc.below_full()] == ["bank/user_task_0"]


def test_no_confirmed_side_effect_anywhere_has_no_median():
    fc = coverage.build(manifest({"s/a": "user"}), {})
    assert fc.suites["s"].median is None and fc.matrix == {}
    assert coverage.fmt(None) == "no side effect confirmed"


def test_the_note_names_the_families_and_says_lower_bound():
    fc = coverage.build(manifest({"s/a": "user"}, ("omit", "extra", "extra-oos")), {})
    assert fc.families == ["extra", "extra-oos"]
    assert "lower bound of what the grammar planted" in fc.note and "extra, extra-oos" in fc.note


@pytest.mark.parametrize(
    ("value", "shown"), [(1.0, "1.00"), (0.0, "0.00"), (299 / 300, "0.99"), (0.29, "0.29"), (2 / 3, "0.66")]
)
def test_a_coverage_below_one_never_reads_as_one(value, shown):
    assert coverage.fmt(value) == shown


# --- properties over generated rows ----------------------------------------------------------------

TASKS = ("a/t0", "a/t1", "b/t2", "b/t3")
COLLECTIONS = ("items", "log", "mail")
rows_strategy = st.lists(
    st.tuples(
        st.sampled_from(TASKS),
        st.sampled_from([*SE, "omit", "wrong-value", "control"]),
        st.sampled_from(list(Outcome)),
        st.lists(st.sampled_from(COLLECTIONS), max_size=3, unique=True),
        st.booleans(),
    ),
    max_size=40,
)


def confirmed(r: CellResult) -> bool:
    # The rule, restated apart from coverage.py's own code.
    return (
        r.family in ("extra", "extra-ni", "extra-oos", "wrong-first", "oos-before")
        and r.outcome.value in ("rejected", "false_accept")
        and not r.unscorable
    )


@given(rows_strategy)
def test_coverage_properties_hold_for_every_ledger(spec):
    rows = ledger(*(row(t, f, o, tuple(cs), n, u) for n, (t, f, o, cs, u) in enumerate(spec)))
    fc = coverage.build(manifest(dict.fromkeys(TASKS, "user")), rows)
    assert set(fc.verifiers) == set(TASKS)
    for task, v in fc.verifiers.items():
        mine = [r for r in rows.values() if r.task == task and confirmed(r)]
        passed = [r for r in mine if r.outcome == O.FALSE_ACCEPT]
        assert (v.side_effects, v.false_accepts, v.rejected) == (len(mine), len(passed), len(mine) - len(passed))
        if not mine:
            assert v.coverage is None and task not in fc.matrix
            continue
        assert v.coverage is not None and 0.0 <= v.coverage <= 1.0
        assert (v.coverage == 1.0) == (not passed)  # exactly 1.0 when no side effect passes
        assert (v.coverage == 0.0) == (len(passed) == len(mine))  # exactly 0.0 when every one passes
        # The matrix agrees with the counts: its columns are the collections the confirmed cells
        # touch, each value is the share rejected of those, which no column can exceed in count.
        columns = fc.matrix.get(task, {})
        assert set(columns) == {d.collection for r in mine for d in r.evidence.differs_from_reference or []}
        for c, value in columns.items():
            there = [r for r in mine if c in coverage.touched(r)]
            tally = v.collections[c]
            assert tally.side_effects == len(there) <= v.side_effects
            assert tally.rejected <= v.rejected and tally.false_accepts <= v.false_accepts
            assert value == tally.rejected / tally.side_effects
            assert 0.0 <= value <= 1.0
            if not passed:
                assert value == 1.0
            if len(passed) == len(mine):
                assert value == 0.0
    for suite, g in fc.suites.items():
        values = [v.coverage for t, v in fc.verifiers.items() if t.startswith(suite + "/") and v.coverage is not None]
        assert g.with_coverage == len(values)
        assert g.median == (statistics.median(values) if values else None)
        assert g.side_effects == g.rejected + g.false_accepts


# --- the summary and the terminal ------------------------------------------------------------------


def test_a_summary_of_side_effect_cells_carries_the_table():
    rows = ledger(row("s/a", "extra", O.FALSE_ACCEPT), row("s/a", "extra-ni", O.REJECTED, n=1))
    cells = [Cell(r.cell_id, r.task, r.family, r.variant, Run(()), "repeated a write") for r in rows.values()]
    m = msgspec.structs.replace(manifest({"s/a": "user", "s/b": "user"}), cells=cells)
    s = summary_mod.build(m, rows)
    md = summary_mod.markdown(s)
    assert "## Frame coverage" in md
    assert "| `s/a` | user | 2 | 1 | 1 | 0.50 | `items` 1/2 |" in md
    assert "| `s/b` | user | 0 | 0 | 0 | no side effect confirmed |" in md
    assert "| s | 2 | 1 | 0.50 | 1 | 2 | 1 | 1 |" in md
    assert "lower bound of what the grammar planted" in md
    data = json.loads(msgspec.json.encode(s))
    fc = data["frame_coverage"]
    assert fc["verifiers"]["s/a"]["coverage"] == 0.5 and fc["verifiers"]["s/b"]["coverage"] is None
    assert fc["matrix"] == {"s/a": {"items": 0.5}}
    assert fc["suites"]["s"]["median"] == 0.5 and fc["kinds"]["user"]["median"] == 0.5


def audit(bench: str, out: Path) -> dict:
    result = verimut("audit", f"tests.coveragebench:{bench}", "--out", str(out), "--quiet", "--executor", "inprocess")
    assert result.returncode in (0, 1), result.stderr
    return {"stdout": result.stdout, **json.loads((out / "summary.json").read_text())}


@pytest.fixture(scope="module")
def own(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("coverage") / "own"
    return out, audit("own_record", out)


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("coverage") / "whole"
    return out, audit("whole_state", out)


def test_a_verifier_of_its_own_record_only_has_coverage_zero(own):
    _, s = own
    fc = s["frame_coverage"]
    assert {t: v["coverage"] for t, v in fc["verifiers"].items()} == dict.fromkeys(
        ["notes/add_$5_idea", "todo/add_milk", "todo/tag_home"], 0.0
    )
    # extra (extra-ni's run is the same duplicate, counted once), and one extra-oos per other task's write
    sides = {t: v["side_effects"] for t, v in fc["verifiers"].items()}
    assert sides == {"notes/add_$5_idea": 1, "todo/add_milk": 2, "todo/tag_home": 2}
    assert all(v["rejected"] == 0 for v in fc["verifiers"].values())
    # The duplicates touch each task's own collection; the two to-do tasks' appended writes, each other's.
    assert fc["matrix"] == {
        "notes/add_$5_idea": {"notes": 0.0},
        "todo/add_milk": {"items": 0.0, "tags": 0.0},
        "todo/tag_home": {"items": 0.0, "tags": 0.0},
    }
    assert {k: g["median"] for k, g in fc["suites"].items()} == {"notes": 0.0, "todo": 0.0}
    # The terminal: the suite medians, and the verifiers below 1.0.
    assert "frame coverage" in s["stdout"] and "verifiers below 1.0" in s["stdout"]
    assert "todo/add_milk" in s["stdout"]


def test_a_verifier_of_the_whole_state_has_coverage_one(whole):
    _, s = whole
    fc = s["frame_coverage"]
    assert {v["coverage"] for v in fc["verifiers"].values()} == {1.0}
    assert {k: g["median"] for k, g in fc["suites"].items()} == {"notes": 1.0, "todo": 1.0}
    assert "frame coverage" in s["stdout"] and "verifiers below 1.0" not in s["stdout"]


def test_the_terminal_caps_the_verifiers_below_one_to_a_screen():
    from verimut.cli.terminal import BELOW_FULL_SHOWN
    from verimut.cli.terminal import coverage_tables as _coverage_tables

    tasks = {f"s/t{k}": "user" for k in range(BELOW_FULL_SHOWN + 5)}
    rows = ledger(*(row(t, "extra", O.FALSE_ACCEPT) for t in tasks))
    suites, low = _coverage_tables(coverage.build(manifest(tasks), rows))
    assert suites.row_count == 1
    assert low.row_count == BELOW_FULL_SHOWN and f"of {len(tasks)}" in str(low.title)


def test_the_reproducer_re_derives_each_verifiers_counts(own, tmp_path):
    # reproduce.py (a bundle's `verify`) re-derives them with the standard library alone.
    out, _ = own
    arm, checks = reproduce.check_dir(out)
    assert arm == "fault" and all(c.ok for c in checks), [c.line() for c in checks if not c.ok]
    mine = [c for c in checks if c.name.startswith("frame_coverage.verifiers")]
    assert len(mine) == 3 * 3  # three verifiers, three counts each
    assert reproduce.SIDE_EFFECT_FAMILIES == coverage.side_effect_families()

    def verified(edit) -> list[str]:  # type: ignore[no-untyped-def]
        copy = tmp_path / "copy"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(out, copy)
        summary = json.loads((copy / "summary.json").read_text())
        edit(summary)
        (copy / "summary.json").write_text(json.dumps(summary))
        return [c.name for c in reproduce.check_dir(copy)[1] if not c.ok]

    def tamper(s: dict) -> None:
        s["frame_coverage"]["verifiers"]["todo/add_milk"]["false_accepts"] = 0

    assert verified(tamper) == ["frame_coverage.verifiers[todo/add_milk][false_accepts]"]
    # A summary written before frame coverage existed still verifies.
    assert verified(lambda s: s.pop("frame_coverage")) == []


# --- report.html in headless Chromium ---------------------------------------------------------------


def test_the_report_shows_the_frame_coverage_heat_map_in_chromium(own):
    out, _ = own
    shot = ROOT / "tests" / "artifacts" / "report-frame-coverage.png"
    visit = load(out / "report.html", screenshot=shot, part="#frame-coverage")
    assert visit.console_errors == [] and visit.page_errors == []
    assert [u for u in visit.requests if not u.startswith("data:")] == [(out / "report.html").resolve().as_uri()]
    assert visit.broken_images == 0
    heatmaps = [a for a in visit.decoded if a.startswith("frame coverage heat map")]
    assert sorted(heatmaps) == [
        "frame coverage heat map of notes: verifier x collection, share rejected",
        "frame coverage heat map of todo: verifier x collection, share rejected",
    ]
    assert shot.stat().st_size > 10_000
    page = (out / "report.html").read_text()
    assert "median coverage" in page and "lower bound of what the grammar planted" in page
