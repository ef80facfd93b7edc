"""WorkArena's service-catalog ordering tasks: the real validator in headless Chromium, against the offline stand-in.

The stand-in is verimut's loopback imitation of ServiceNow, not ServiceNow (servicenow_standin.py and its
catalog_standin.py). One audit of the standard laptop's first configuration (wrong-value and no-submit;
about a minute and a half) feeds the browser tests; the rest need no browser.
"""

from __future__ import annotations

import os

import pytest
import requests

from verimut import api as audit_mod
from verimut.engine.store import Store
from verimut.executors.pool import Pool

pytest.importorskip("browsergym.workarena", reason="install with scripts/install-workarena.sh")
from verimut.adapters import workarena as wa
from verimut.adapters.workarena import catalog
from verimut.adapters.workarena import catalog_standin as cat_standin
from verimut.adapters.workarena import servicenow_standin as standin
from verimut.core.benchmark import resolve

TASK = "once-after-submit/order-standard-laptop-0"  # a textarea, two checkboxes, quantity 1
SOFTWARE = "Additional software requirements"


@pytest.fixture(scope="module")
def audited(stand_in, tmp_path_factory):
    if not os.path.exists(wa.CHROMIUM):
        pytest.skip(f"{wa.CHROMIUM} is missing: run scripts/install-chromium.sh")
    bench = wa.WorkArena(stand_in.url, standin.ADMIN, stand_in=True, catalog="only", catalog_configs="0")
    out = tmp_path_factory.mktemp("workarena-catalog")
    try:
        audit_mod.audit(
            resolve(bench),
            out,
            tasks=[TASK],
            families=["wrong-value", "no-submit"],
            executor=Pool(workers=1, timeout=240),
        )
    finally:
        bench.close_all()
    return Store(out).read_manifest(), Store(out).rows()


# --- in Chromium, with the real validator ------------------------------------------------------------


def test_the_reference_order_passes_and_its_readback_holds_the_request(audited):
    r = audited[1][f"{TASK}:control"]
    assert r.outcome == "control_pass", r.evidence
    assert r.evidence.changed_from_start == {
        "sc_request": "1 added",
        "sc_req_item": "1 added",
        "sc_item_option": "3 added",
    }


def test_a_wrong_quantity_is_rejected_and_the_readback_shows_it(audited):
    r = audited[1][f"{TASK}:wrong-value:quantity"]
    assert r.outcome == "rejected" and "quantity is incorrect" in r.evidence.verifier
    [diff] = r.evidence.differs_from_reference
    assert diff.collection == "sc_req_item" and diff.changed[0].fields == {"quantity": ("1", "2")}


def test_an_unrequested_pick_in_the_software_list_is_a_confirmed_false_accept(audited):
    """validate() tests a textarea by containment: the requested list plus one more passes; the readback differs."""
    r = audited[1][f"{TASK}:wrong-value:{SOFTWARE}"]
    assert r.outcome == "false_accept" and r.verdict is True
    [diff] = r.evidence.differs_from_reference
    [change] = diff.changed
    requested = "Trello, Salesforce, Google Workspace"
    assert change.fields == {"value": (requested, f"{requested}, Slack")}


def test_no_order_is_rejected_no_request_in_the_url(audited):
    r = audited[1][f"{TASK}:no-submit"]
    assert r.outcome == "rejected" and "sysid is not in the URL" in r.evidence.verifier


def test_the_census_lists_quantity_and_the_item_s_variables_all_requested(audited):
    facts = audited[0].tasks[TASK].form
    assert facts is not None and facts.table == "sc_req_item"
    assert facts.task_fields == ["quantity", SOFTWARE, "Adobe Acrobat", "Adobe Photoshop"]
    quantity = facts.field("quantity")
    assert quantity is not None and (quantity.default, quantity.template, quantity.other) == ("1", "1", "2")


def test_every_request_and_user_an_episode_created_is_torn_down(audited, stand_in):
    for table in catalog.TABLES:
        assert stand_in.records(table) == [], table
    assert [u["user_name"] for u in stand_in.records("sys_user")] == [standin.ADMIN[0]]


# --- no browser ------------------------------------------------------------------------------------------


def test_the_catalog_tasks_are_the_nine_of_workarena_s_registry():
    assert len(catalog.classes()) == 9
    assert all(c.__name__.startswith("Order") for c in catalog.classes().values())
    bench_tasks = catalog.tasks(wa.PROTOCOLS, catalog.DEFAULT_CONFIGS)
    assert len(bench_tasks) == 9 * 3 * 2 and TASK in bench_tasks and "per-step/order-ipad-mini-0" in bench_tasks
    assert catalog.parse("per-step/order-development-laptop-p-c-2") == ("per-step", "order-development-laptop-p-c", 2)
    assert catalog.parse("once-after-submit/incident-0") is None


def test_an_order_is_what_workarena_s_own_request_reader_expects(stand_in):
    """WorkArena's get_request_by_id (what validate() calls) reads an order the stand-in placed."""
    from browsergym.workarena.api.requests import get_request_by_id
    from browsergym.workarena.instance import SNowInstance

    item = cat_standin.items()["iPad mini"]
    colour, storage = item.variables
    posted = {"quantity": "3", f"IO:{colour.sys_id}": "Pink", f"IO:{storage.sys_id}": "256"}
    request_id = cat_standin.order(stand_in.store, item, posted, standin.ADMIN[0])
    instance = SNowInstance(snow_url=stand_in.url, snow_credentials=standin.ADMIN)
    found = get_request_by_id(instance=instance, sysid=request_id)
    [line] = found["items"]
    assert (line["short_description"], line["quantity"]) == ("Request for iPad mini", "3")
    assert line["options"] == {"Choose the colour": "Pink", "Choose the storage": "256"}
    for table in catalog.TABLES:  # leave the module's stand-in empty for the teardown test
        for r in stand_in.records(table):
            requests.delete(f"{stand_in.url}/api/now/table/{table}/{r['sys_id']}", auth=standin.ADMIN, timeout=10)


def test_the_instruction_is_workarena_s_goal_from_the_configuration():
    assert catalog.instruction(TASK) == (
        'Go to the hardware store and order 1 "Standard Laptop" with configuration '
        f"{{'{SOFTWARE}': 'Trello, Salesforce, Google Workspace', 'Adobe Acrobat': False, 'Adobe Photoshop': False}}"
    )


def test_catalog_options_are_read_and_bad_ones_named():
    assert catalog.configs_option("0,2") == (0, 2) and catalog.configs_option(None) == (0, 1, 2)
    with pytest.raises(Exception, match="catalog_configs"):
        catalog.configs_option("a")
    with pytest.raises(Exception, match="only, none, both"):
        wa.catalog_tasks_option("some")
