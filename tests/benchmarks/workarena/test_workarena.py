"""WorkArena: the real form validator (browsergym-workarena 0.5.3) in headless Chromium, against the offline stand-in.

The stand-in is verimut's loopback imitation of ServiceNow's navigation mechanism, not ServiceNow
(src/verimut/adapters/workarena/servicenow_standin.py). One audit of the incident form's first configuration,
under both validation protocols, feeds the browser tests (about two minutes); the rest need no browser.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import requests

from conftest import ROOT
from verimut import api as audit_mod
from verimut.engine.store import Store
from verimut.executors.pool import Pool

pytest.importorskip("browsergym.workarena", reason="install with scripts/install-workarena.sh")
from verimut.adapters import workarena as wa
from verimut.adapters.workarena import servicenow_standin as standin
from verimut.core.benchmark import resolve

TASKS = ["once-after-submit/incident-0", "per-step/incident-0"]


@pytest.fixture(scope="module")
def audited(stand_in, tmp_path_factory):
    """The incident form's first configuration, both protocols, the families the issue names, in a forked worker."""
    bench = wa.WorkArena(stand_in.url, standin.ADMIN, stand_in=True)
    out = tmp_path_factory.mktemp("workarena")
    try:
        families = ["claim-only", "omit-divergent", "no-submit", "extra-field"]  # omit-field: operator test below
        audit_mod.audit(resolve(bench), out, tasks=TASKS, families=families, executor=Pool(workers=2, timeout=240))
    finally:
        bench.close_all()
    return Store(out).read_manifest(), Store(out).rows()


def row(audited, cell_id):
    return audited[1][cell_id]


# --- on the stand-in, with the real validator --------------------------------------------------------


def test_the_reference_run_passes_under_both_protocols(audited):
    for task in TASKS:
        r = row(audited, f"{task}:control")
        assert r.outcome == "control_pass", r.evidence
        assert r.evidence.verifier.startswith(task.split("/")[0] + ":")  # each verdict records its protocol


def test_the_census_picks_an_out_of_scope_field_whose_template_differs_from_its_default(audited):
    m, _ = audited
    facts = m.tasks[TASKS[0]].form
    assert facts is not None and facts.table == "incident"
    [cell] = [c for c in m.cells if c.task == TASKS[0] and c.variant == "category"]
    assert cell.detail["field"] not in facts.task_fields
    assert (cell.detail["default"], cell.detail["value"]) == ("Inquiry / Help", "Hardware")
    assert cell.detail["step_split"] == "separate steps"
    # The record number is generated per fresh form: recorded as such, so the manifest is the same next run.
    number = facts.field("number")
    assert number is not None and number.default is None


def test_extra_field_is_a_confirmed_false_accept_once_after_submit(audited):
    for variant in ("category", "category+submit"):
        r = row(audited, f"once-after-submit/incident-0:extra-field:{variant}")
        assert r.outcome == "false_accept" and r.verdict is True
        # The readback, before the validator ran, holds the out-of-scope value the task never asked for.
        [diff] = r.evidence.differs_from_reference
        [change] = diff.changed
        assert change.fields == {"category": (standin.raw_choice("Inquiry / Help"), standin.raw_choice("Hardware"))}
        assert "WORKARENA_BAD_FIELD_CHANGED" in r.reason  # the one-line why, from the adapter


def test_per_step_validation_rejects_the_extra_field_only_in_a_step_of_its_own(audited):
    apart = row(audited, "per-step/incident-0:extra-field:category")
    assert apart.outcome == "rejected"
    assert "Some fields outside of the task scope have been changed" in apart.evidence.verifier
    together = row(audited, "per-step/incident-0:extra-field:category+submit")
    assert together.outcome == "false_accept"
    assert together.evidence.verifier.startswith("per-step:")


@pytest.mark.parametrize("family", ["omit-divergent", "no-submit", "claim-only"])
@pytest.mark.parametrize("task", TASKS)
def test_omit_divergent_no_submit_and_claim_only_are_rejected(audited, task, family):
    [r] = [r for r in audited[1].values() if r.task == task and r.family == family]
    assert r.outcome == "rejected", r.evidence


def test_every_record_and_user_an_episode_created_is_torn_down(audited, stand_in):
    assert stand_in.records("incident") == []
    assert [u["user_name"] for u in stand_in.records("sys_user")] == [standin.ADMIN[0]]


# --- the command line ------------------------------------------------------------------------------


def _verimut(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SNOW_INSTANCE_")}
    code = "from verimut.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env={**clean, **(env or {})}, check=False
    )


def test_without_an_instance_the_audit_says_how_to_name_one(tmp_path):
    done = _verimut("audit", "workarena", "-o", str(tmp_path / "o"))
    assert done.returncode == 2
    assert "SNOW_INSTANCE_URL" in done.stderr and "--stand-in" in done.stderr


@pytest.mark.parametrize("command", ["audit", "swap"])
def test_stand_in_is_refused_for_other_benchmarks(tmp_path, command):
    done = _verimut(command, "agentdojo", "--stand-in", "-o", str(tmp_path / "o"))
    assert done.returncode == 2 and "--stand-in is for workarena" in done.stderr


# --- no browser: the stand-in's Table API, the census, the operators -------------------------------------


def test_the_stand_in_table_api_stores_raw_values_and_shows_labels(stand_in):
    api = f"{stand_in.url}/api/now/table/incident"
    assert requests.get(api, timeout=10).status_code == 401
    made = requests.post(api, json={"category": "Hardware", "short_description": "x"}, auth=standin.ADMIN, timeout=10)
    sys_id = made.json()["result"]["sys_id"]
    q = {"sysparm_query": f"sys_id={sys_id}", "sysparm_fields": "category"}
    raw = requests.get(api, params=q, auth=standin.ADMIN, timeout=10).json()["result"]
    shown = requests.get(api, params={**q, "sysparm_display_value": "true"}, auth=standin.ADMIN, timeout=10)
    assert raw == [{"category": "hardware"}] and shown.json()["result"] == [{"category": "Hardware"}]
    assert requests.delete(f"{api}/{sys_id}", auth=standin.ADMIN, timeout=10).status_code == 204
    assert stand_in.records("incident") == []


def test_the_stand_in_serves_exactly_the_fields_workarena_expects():
    for table, path in (
        ("incident", "expected_incident_form_fields"),
        ("change_request", "expected_change_request_form_fields"),
    ):
        expected = standin._data(f"setup_files/forms/{path}.json")
        assert [f.name for f in standin.form(table).fields] == expected


def test_the_verifier_source_is_workarena_s_own_validate(stand_in):
    bench = wa.WorkArena(stand_in.url, standin.ADMIN, stand_in=True)
    path, line, name = bench.verifier_source(TASKS[0])
    assert path.endswith("browsergym/workarena/tasks/form.py") and line > 0 and name == "GenericNewRecordTask.validate"


def test_configs_can_be_chosen_and_bad_ones_are_named():
    assert wa._configs("incident:0,2") == {"incident": (0, 2)}
    with pytest.raises(Exception, match="cannot read 'ticket:1'"):
        wa._configs("ticket:1")


def test_the_install_script_installs_chromium_through_the_repo_step():
    script = (ROOT / "scripts" / "install-workarena.sh").read_text()
    assert "scripts/install-chromium.sh" in script and "workarena" in script


def test_the_stand_in_runs_on_every_core_and_a_live_instance_one_cell_at_a_time(stand_in):
    """issue 44, item 2: the stand-in's cells and manifest run on `--workers` processes, a browser each; a live
    instance is shared state, one cell at a time. (The audit above ran on two workers.)"""
    assert resolve(wa.WorkArena(stand_in.url, standin.ADMIN, stand_in=True)).concurrency is None
    assert resolve(wa.WorkArena(stand_in.url, standin.ADMIN)).concurrency == 1


def test_a_browser_that_crashed_is_started_again_at_the_next_episode(stand_in):
    bench = wa.WorkArena(stand_in.url, standin.ADMIN, stand_in=True)
    try:
        first = bench.reset(TASKS[0])
        crashed = bench._browser
        crashed.close()  # as a crash leaves it: disconnected under the live episode
        second = bench.reset(TASKS[0])
        assert bench._browser is not crashed and bench._browser.is_connected()
        assert second.page is not first.page and bench.verify(second, bench.reference(TASKS[0], second)) is not None
    finally:
        bench.close_all()
