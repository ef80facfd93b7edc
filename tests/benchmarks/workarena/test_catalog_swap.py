"""The swap grid pairs form and catalog tasks: one form task x one catalog task, the real validators in headless
Chromium, against the offline stand-in (servicenow_standin.py, catalog_standin.py; not ServiceNow).

One grid of 4 cells: both diagonal controls, the catalog validator on the form run and the form validator on
the catalog run.
"""

from __future__ import annotations

import os

import pytest

from verimut import api as audit_mod
from verimut.engine.store import Store
from verimut.executors.pool import Pool

pytest.importorskip("browsergym.workarena", reason="install with scripts/install-workarena.sh")
from verimut.adapters import workarena as wa
from verimut.adapters.workarena import catalog
from verimut.adapters.workarena import servicenow_standin as standin
from verimut.core.benchmark import USER, kind_of, resolve

if not os.path.exists(wa.CHROMIUM):
    pytest.skip(f"{wa.CHROMIUM} is missing: run scripts/install-chromium.sh", allow_module_level=True)

FORM = "once-after-submit/incident-0"
ORDER = "once-after-submit/order-standard-laptop-0"


@pytest.fixture(scope="module")
def grid(stand_in, tmp_path_factory):
    out = tmp_path_factory.mktemp("catalog-swap")
    bench = wa.WorkArena(stand_in.url, standin.ADMIN, stand_in=True, catalog_configs="0")
    try:
        audit_mod.swap(resolve(bench), out, tasks=[FORM, ORDER], executor=Pool(workers=1, timeout=240))
    finally:
        bench.close_all()
    return Store(out).read_manifest(), Store(out).rows()


def test_a_form_and_a_catalog_task_are_paired_with_passing_controls(grid):
    m, rows = grid
    assert len(m.cells) == len(rows) == 4
    for task in (FORM, ORDER):
        assert rows[f"{task}:control"].outcome == "control_pass"
    swapped = {r.evidence.run_task: r for r in rows.values() if r.family == "swap"}
    assert set(swapped) == {FORM, ORDER}
    for r in swapped.values():
        assert r.outcome == "rejected" and r.evidence.rung == "3"  # incident vs. the catalog's request tables
    # The form validator on the order's page: its URL check. The catalog validator on the form's page: the
    # request id it reads from the top window's URL (a form submit creates no request).
    assert "not in the right URL" in swapped[ORDER].evidence.verifier
    assert "OrderStandardLaptopTask.validate()" in swapped[FORM].evidence.verifier
    assert "the sysid is not in the URL" in swapped[FORM].evidence.verifier


def test_the_catalog_tasks_are_user_tasks_now_they_can_be_swapped(stand_in):
    bench = resolve(wa.WorkArena(stand_in.url, standin.ADMIN, stand_in=True, catalog_configs="0"))
    assert catalog.is_catalog(ORDER) and kind_of(bench, ORDER) == kind_of(bench, FORM) == USER


def test_every_record_and_user_the_grid_created_is_torn_down(grid, stand_in):
    for table in ("incident", *catalog.TABLES):
        assert stand_in.records(table) == []
    assert [u["user_name"] for u in stand_in.records("sys_user")] == [standin.ADMIN[0]]
