"""WorkArena's other form templates and the swap grid, in headless Chromium, against the offline stand-in.

The stand-in is verimut's loopback imitation of ServiceNow's navigation mechanism, not ServiceNow
(src/verimut/adapters/workarena/servicenow_standin.py). Two small runs feed the browser tests: the
hardware-asset form's first configuration (the control and the extra field, 3 cells) and a swap grid
of three tasks (9 cells), graded in place and again with a replay per cell; the rest need no browser.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from verimut import api as audit_mod
from verimut.engine.store import Store
from verimut.executors.pool import Pool

pytest.importorskip("browsergym.workarena", reason="install with scripts/install-workarena.sh")
from verimut.adapters import workarena as wa
from verimut.adapters.workarena import servicenow_standin as standin
from verimut.core.benchmark import resolve

if not __import__("os").path.exists(wa.CHROMIUM):
    pytest.skip(f"{wa.CHROMIUM} is missing: run scripts/install-chromium.sh", allow_module_level=True)

HARDWARE = "once-after-submit/hardware_asset-0"
GRID = ["once-after-submit/incident-0", "once-after-submit/incident-1", "once-after-submit/problem-0"]


def _run(stand_in, out, how, in_place=True):
    bench = wa.WorkArena(stand_in.url, standin.ADMIN, stand_in=True)
    try:
        adapter = dataclasses.replace(resolve(bench), grades_in_place=in_place)
        how(adapter, out, executor=Pool(workers=1, timeout=240))
    finally:
        bench.close_all()
    return Store(out).read_manifest(), Store(out).rows()


@pytest.fixture(scope="module")
def hardware(stand_in, tmp_path_factory):
    out = tmp_path_factory.mktemp("hardware")
    return _run(stand_in, out, lambda b, o, **k: audit_mod.audit(b, o, tasks=[HARDWARE], families=["extra-field"], **k))


@pytest.fixture(scope="module")
def grid(stand_in, tmp_path_factory):
    out = tmp_path_factory.mktemp("swap")
    return _run(stand_in, out, lambda b, o, **k: audit_mod.swap(b, o, tasks=GRID, **k))


@pytest.fixture(scope="module")
def grid_per_cell(stand_in, tmp_path_factory):
    """The same grid with every swap cell replayed from its own reset (no grading in place)."""
    out = tmp_path_factory.mktemp("swap-per-cell")
    return _run(stand_in, out, lambda b, o, **k: audit_mod.swap(b, o, tasks=GRID, **k), in_place=False)


# --- a form template other than incident and change request, end to end ------------------------------


def test_the_hardware_asset_reference_run_passes(hardware):
    r = hardware[1][f"{HARDWARE}:control"]
    assert r.outcome == "control_pass", r.evidence
    assert r.evidence.changed_from_start == {"alm_hardware": "1 added"}


def test_the_hardware_asset_extra_field_is_scored_with_readback_evidence(hardware):
    m, rows = hardware
    [cell, *_] = [c for c in m.cells if c.family == "extra-field"]
    field, value = cell.detail["field"], cell.detail["value"]
    assert field not in m.tasks[HARDWARE].form.task_fields
    r = rows[cell.cell_id]
    assert r.outcome == "false_accept" and r.verdict is True
    # The Table API readback, taken before the validator ran, holds the out-of-scope value.
    [diff] = r.evidence.differs_from_reference
    [change] = diff.changed
    assert change.fields[field] == (standin.raw_choice(cell.detail["default"]), standin.raw_choice(value))


def test_every_record_and_user_the_runs_created_is_torn_down(hardware, grid, grid_per_cell, stand_in):
    for table in ("alm_hardware", "incident", "problem"):
        assert stand_in.records(table) == []
    assert [u["user_name"] for u in stand_in.records("sys_user")] == [standin.ADMIN[0]]


# --- the swap grid ------------------------------------------------------------------------------------------


def test_a_small_swap_grid_completes_with_passing_diagonal_controls(grid):
    m, rows = grid
    assert len(m.cells) == len(rows) == 9
    for task in GRID:
        assert rows[f"{task}:control"].outcome == "control_pass"
    swapped = [r for r in rows.values() if r.family == "swap"]
    assert len(swapped) == 6 and all(r.outcome == "rejected" for r in swapped)
    for r in swapped:
        assert "in the session of" in r.evidence.verifier
        if r.evidence.rung == "3":  # other tables: the validator, put in the run's session, rejects on its URL check
            assert "not in the right URL" in r.evidence.verifier
    # incident-0 and incident-1: the same table, other fields (the sibling rung).
    assert {r.evidence.rung for r in swapped} == {"1", "3"}


def test_graded_in_place_the_grid_says_what_a_replay_per_cell_says(grid, grid_per_cell):
    def said(rows):
        return {k: (r.outcome, r.verdict, r.evidence.verifier, r.evidence.effect_missing) for k, r in rows.items()}

    assert said(grid[1]) == said(grid_per_cell[1])


# --- no browser ---------------------------------------------------------------------------------------------


def test_the_form_templates_come_from_workarena_s_registry():
    assert set(wa.form_templates()) == {"incident", "change_request", "hardware_asset", "problem", "user"}
    assert wa._configs() == {name: (0, 1, 2) for name in wa.form_templates()}
    assert wa._configs("hardware_asset:4;user:0") == {"hardware_asset": (4,), "user": (0,)}


def test_the_stand_in_serves_every_form_template_s_table():
    tables = {"incident", "change_request", "alm_hardware", "problem", "sys_user"}
    assert set(standin.FORMS) == tables
    for t in standin.FORMS:
        f = standin.form(t)
        assert [x.name for x in f.fields] == standin._data(standin._SPECS[t]["expected"])


def test_unique_values_are_pinned_per_configuration_across_processes(stand_in):
    """WorkArena draws the user's names per task object; the reference run must be the same in every process."""
    code = (
        "import sys; from verimut.adapters import workarena as wa; "
        f"b = wa.WorkArena(sys.argv[1], ('admin', '{standin.ADMIN[1]}'), stand_in=True); "
        "print(b.instruction('once-after-submit/user-0')); print(b.instruction('once-after-submit/hardware_asset-0'))"
    )
    said = [
        subprocess.run([sys.executable, "-c", code, stand_in.url], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert said[0] == said[1] and "SN-" in said[0]
