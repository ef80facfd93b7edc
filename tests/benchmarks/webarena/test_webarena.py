"""WebArena-Verified, for real: the package's own evaluators, on verimut's synthesized evidence, through the CLI.

The tasks are chosen for one evaluator kind each (a retrieve task graded on the response alone, a navigate task's
last page, a form POST, a JSON PUT, a purchase graded on a response body, a task that forbids a request) and for
the findings the evidence grammar must make on them: a star toggled twice is accepted (the evaluator looks at
the last request only), an update made twice is harmless, a comment posted twice is a false accept, a fork made
twice cannot be (the site refuses it), an answer that names two amounts is accepted (the currency parser reads
the first), two evaluators that want the last request to one URL to be two different ones can pass no evidence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, verimut

if not (ROOT / ".venv-webarena" / "bin" / "python").exists():
    pytest.skip(
        "WebArena-Verified's environment .venv-webarena is missing: scripts/install-webarena-verified.sh",
        allow_module_level=True,
    )

KINDS = {
    "shopping_admin/0": "retrieve: the response alone",
    "gitlab/44": "navigate: the last page loaded",
    "shopping_admin/538": "mutate: a form POST with pinned fields",
    "gitlab/446": "mutate: a JSON PUT reached by JSONPath",
    "shopping/506": "mutate: four requests, one graded on its response body",
    "shopping/528": "mutate: a request that must not be made",
}
FINDINGS = ["gitlab/523", "gitlab/390", "shopping_admin/94", "shopping/124", "gitlab/395"]
UNSATISFIABLE = ["gitlab/567", "gitlab/811", "shopping/319"]
TASKS = [*KINDS, *FINDINGS, *UNSATISFIABLE]


def rows(out: Path) -> dict[str, dict[str, Any]]:
    return {r["cell_id"]: r for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("webarena") / "audit"
    args = [a for t in TASKS for a in ("--task", t)]
    result = verimut("audit", "webarena-verified", *args, "--out", str(out), "-q")
    assert result.returncode == 1, result.stderr  # confirmed false accepts
    return out


def test_a_synthesized_reference_passes_each_kind_of_evaluator(audit):
    r = rows(audit)
    assert {t: r[f"{t}:control"]["outcome"] for t in [*KINDS, *FINDINGS]} == dict.fromkeys(
        [*KINDS, *FINDINGS], "control_pass"
    )


def test_a_task_no_evidence_can_pass_fails_its_control_and_says_why(audit):
    r = rows(audit)
    clash = r["gitlab/567:control"]
    assert clash["outcome"] == "control_fail"
    assert "last_event_only" in clash["evidence"]["verifier"]
    broken = r["gitlab/811:control"]
    assert broken["outcome"] == "control_fail"
    assert "errs on the task's own expected value" in broken["evidence"]["verifier"]
    response = r["shopping/319:control"]
    assert "fails every response verimut tried" in response["evidence"]["verifier"]


def test_a_fork_a_site_refuses_to_make_twice_is_an_edit_that_cannot_be_delivered(audit):
    r = rows(audit)
    assert r["gitlab/395:control"]["outcome"] == "control_pass"
    assert r["gitlab/395:extra"]["outcome"] == "incomplete"  # the second fork of one project answers 409


def test_a_star_toggled_twice_is_accepted_and_a_comment_posted_twice_too(audit):
    r = rows(audit)
    assert r["gitlab/523:extra"]["outcome"] == "false_accept"  # star, unstar: the last request is a star
    assert r["gitlab/390:extra"]["outcome"] == "false_accept"  # two "lgtm" notes


def test_an_update_made_twice_or_wrong_then_right_is_harmless(audit):
    r = rows(audit)
    assert r["shopping_admin/538:extra"]["outcome"] == "harmless"
    assert {c["outcome"] for k, c in r.items() if k.startswith("shopping_admin/538:wrong-first")} == {"harmless"}


def test_a_wrong_post_field_is_rejected_and_a_wrong_comment_first_is_a_false_accept(audit):
    r = rows(audit)
    assert {c["outcome"] for k, c in r.items() if k.startswith("shopping_admin/538:wrong-post")} == {"rejected"}
    assert r["gitlab/390:wrong-first:1.note.note"]["outcome"] == "false_accept"  # a wrong note stays


def test_an_amount_named_with_a_second_candidate_passes_the_currency_comparison(audit):
    r = rows(audit)
    hedges = [c for k, c in r.items() if k.startswith("shopping_admin/94:data-hedge")]
    assert hedges and {c["outcome"] for c in hedges} == {"false_accept"}
    near = [c for k, c in r.items() if k.startswith("shopping_admin/94:data-near-miss")]
    assert near and {c["outcome"] for c in near} == {"rejected"}  # 0.50 off: past the 0.1 tolerance


def test_another_tasks_write_is_an_out_of_scope_write_the_navigate_evaluator_never_sees(audit):
    r = rows(audit)
    oos = [c for k, c in r.items() if k.startswith("gitlab/44:extra-oos")]
    assert oos and {c["outcome"] for c in oos} == {"false_accept"}


def test_a_query_parameter_the_evaluator_ignores_is_a_correct_run_it_passes(audit):
    r = rows(audit)
    [alt] = [c for k, c in r.items() if k.startswith("gitlab/44:alt-query")]
    assert alt["outcome"] == "alt_pass"  # ?page=2 on the todos page: the task ignores `page`


def test_a_finding_says_what_its_evaluators_read_measured_not_the_source_texts_guess(audit):
    # issue 42: the reason comes from what the evaluators read while they ran, not from their configuration's text
    why = rows(audit)["gitlab/390:extra"]["reason"]
    assert why.startswith("gitlab/390's verifier, measured: read creates (fields body, id, method, url)")
    assert "a guess from the verifier's source text" not in why


def test_the_null_run_passes_no_evaluator(audit):
    r = rows(audit)
    assert {r[f"{t}:null-run"]["outcome"] for t in [*KINDS, *FINDINGS]} == {"rejected"}


def test_the_swap_census_grades_one_tasks_evidence_with_another_tasks_evaluator(tmp_path):
    out = tmp_path / "swap"
    args = [a for t in ("shopping_admin/94", "shopping_admin/95", "shopping_admin/538") for a in ("--task", t)]
    result = verimut("swap", "webarena-verified", *args, "--out", str(out), "-q")
    assert result.returncode in (0, 1), result.stderr
    swap = rows(out)
    assert swap["shopping_admin/94:swap:95"]["outcome"] == "rejected"  # another invoice's total
    assert swap["shopping_admin/94:control"]["outcome"] == "control_pass"


def test_an_unknown_subset_is_one_line_and_exit_2(tmp_path):
    result = verimut("audit", "webarena-verified", "-O", "subset=easy", "--out", str(tmp_path / "x"))
    assert result.returncode == 2
    assert "unknown WebArena-Verified subset 'easy'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_each_verifier_call_records_what_the_evaluators_read_of_the_evidence(audit):
    """issue 42: recording copies of the HAR entries and the response (webarena_reads.py), mapped onto the end state."""
    r = rows(audit)
    retrieve = r["shopping_admin/0:control"]["evidence"]["reads"]
    paths = [p for how in ("value", "keys", "whole") for p in retrieve.get(how, [])]
    assert paths and all(p.startswith("state.response.final") for p in paths)  # the response alone
    form = r["shopping_admin/538:control"]["evidence"]["reads"]
    assert {"state.creates", "state.records"} <= set(form["keys"])  # the URL of every request, to pick the graded one
    assert any(
        p.startswith("state.records.") and p.endswith(".fields") for p in form["whole"]
    )  # the graded form's body


def test_a_reason_says_what_the_evaluator_read_and_the_read_map_names_the_response_only_blind_spots(audit):
    r = rows(audit)
    # a comment posted twice: the first one's URL and method were read, the second in full, and it passed
    assert "measured: read creates" in r["gitlab/390:extra"]["reason"]
    assert "listed its records and passed with 1 added" in r["gitlab/390:extra"]["reason"]
    # a star toggled twice: the last request was read, never what the toggles leave
    assert "never the differing field fields" in r["gitlab/523:extra"]["reason"]
    summary = (audit / "summary.md").read_text()
    # the response alone is read: the records an edit of the suite writes are a blind spot (no patch: not flipped)
    [line] = [x for x in summary.splitlines() if x.startswith("| `shopping_admin/0` | ") and "not flipped" in x]
    assert "`records` (not flipped)" in line.split(" | ")[4]
