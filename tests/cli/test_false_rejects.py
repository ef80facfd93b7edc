"""Alternative runs on a plug-in benchmark whose verifier checks an order the task never asks for.

tests/orderbench.py: `order/add_both` asks for apples and pears on a list; its verifier wants
the list to equal ['apples', 'pears'] in that order. The oracle reads the list without its order,
so `alt-order` (the pears first) ends in the reference's end state, and the verifier fails it:
a false reject, listed with its evidence, counted, re-derived by the bundle's reproducer, and
one the gate can name. It is not a false accept, so the default exit rule still passes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import verimut
from verimut.findings import rank
from verimut.outputs import reproduce

REJECT = "order/add_both:alt-order:1-2"


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("alternatives") / "order"
    r = verimut("audit", "tests.orderbench:benchmark", "--out", str(out), "--executor", "inprocess", "-q")
    assert r.returncode == 0, r.stdout + r.stderr  # false_accept>0 is the default rule: none here
    return out


def test_the_order_check_is_a_false_reject_with_its_evidence(audit):
    s = json.loads((audit / "summary.json").read_text())
    assert s["counts"]["alt-order"] == {"false_reject": 1, "refused": 1}  # add_one: one write, nothing to swap
    assert s["counts"]["alt-reads"] == {"alt_pass": 2}
    assert s["counts_by_kind"]["user"]["alt-order"]["false_reject"] == 1
    assert s["alternative_families"] == ["alt-reads", "alt-order", "alt-text", "alt-idem", "alt-answer"]
    assert s["false_accepts"] == []
    [f] = s["false_rejects"]
    assert f["cell_id"] == REJECT and f["alternative"] is True
    assert f["edited_run"] == ["list_items()", "add_item(text='pears')", "add_item(text='apples')"]
    assert f["checks"] == {"every item present": True, "items == ['apples', 'pears']": False}
    assert f["differs_from_reference"] == []  # the oracle: the reference's end state
    assert "the end state equals the reference run's" in f["oracle"]
    row = next(json.loads(x) for x in (audit / "cells.jsonl").read_text().splitlines() if REJECT in x)
    assert row["outcome"] == "false_reject" and row["verdict"] is False
    assert row["evidence"]["changed_from_start"] == {"items": "2 added"}  # the requested effect is there


def test_summary_md_shows_alternatives_apart_and_lists_the_false_reject(audit):
    md = (audit / "summary.md").read_text()
    faults, alternatives = md.split("## Alternative runs: correct runs by another route")
    assert "| alt-order |" not in faults and "alt_pass" not in faults
    assert "| family | alt_pass | false_reject | refused | incomplete | error |" in alternatives
    assert "| alt-order | 0 | 1 | 1 | 0 | 0 |" in alternatives
    rejects = md[md.index("## False rejects") :]
    assert rejects.startswith("## False rejects (end state equals the reference's, the verifier failed): 1")
    assert f"### `{REJECT}` (alternative run)" in rejects
    assert "swapped write #1 add_item and write #2 add_item" in rejects
    assert "`add_item(text='pears')`; `add_item(text='apples')`" in rejects
    assert "failed: `items == ['apples', 'pears']`" in rejects and "- oracle: the end state equals" in rejects


def test_the_report_page_has_the_alternatives_table_and_the_evidence(audit):
    html = (audit / "report.html").read_text()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "Alternative runs: correct runs by another route" in text
    assert "False rejects of alternative runs: 1" in text and "false rejects: 1 ." in text
    cell = html[html.index(f'id="cell-{REJECT}"') :]
    cell = cell[: cell.index("</details>")]
    assert "alternative family" in cell and "the end state equals the reference run" in cell
    assert "items == [&#39;apples&#39;, &#39;pears&#39;]" in cell and 'class="fail">fail' in cell


def test_the_reproducer_rederives_the_alternative_counts(audit):
    arm, checks = reproduce.check_dir(audit)
    assert arm == "fault" and all(c.ok for c in checks), [c.line() for c in checks if not c.ok]
    names = {c.name for c in checks}
    assert {"counts[alt-order][false_reject]", "counts[alt-reads][alt_pass]", "false_rejects cell ids"} <= names


def test_the_gate_names_false_rejects_and_alt_passes(audit):
    cases = {
        "false_reject>0": 1,
        "alt-order.false_reject>0": 1,
        "alt-reads.false_reject>0": 0,
        "alt_pass>=2": 1,
        "alt-reads.alt_pass>2": 0,
    }
    for expr, code in cases.items():
        r = verimut("report", str(audit), "--fail-on", expr)
        assert r.returncode == code, (expr, r.stdout, r.stderr)


def test_junit_fails_the_false_reject_and_passes_the_alt_pass(audit, tmp_path):
    path = tmp_path / "junit.xml"
    r = verimut("report", str(audit), "--junit", str(path))
    assert r.returncode == 0, r.stderr
    xml = path.read_text()
    reject = xml[xml.index('name="alt-order:1-2"') :]
    assert reject[: reject.index("</testcase>")].count('<failure message="false reject: a correct run by another') == 1
    passed = xml[xml.index('name="alt-reads:again-0"') :]
    assert "<failure" not in passed[: passed.index("</testcase>")]


def test_a_false_reject_counts_in_the_rank_budgets_beta(audit):
    # beta: the share of tasks whose verifier fails a correct run. Both controls pass here, so only the
    # alt-order false reject of order/add_both puts a task there; alternatives do not make a task eligible for alpha.
    b = rank.budget_from_audit(audit)
    assert (b.beta_k, b.beta_n) == (1, 2)
    assert b.alpha_k == 0
