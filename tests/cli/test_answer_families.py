"""The answer channel through the real command line, on the question benchmark tests/answerbench.py.

Its five variants grade the same runs' answers five ways, so each family's cells are the same in every audit and
only their outcomes differ. What each variant is caught by, exactly:

- containment (`value in answer`): answer-superstring and answer-hedge, the two families built to beat a
  substring test, are false accepts; answer-drop and answer-wrong are rejected (the value is gone, so even a
  substring test sees it). That is the issue's "a containment verifier gets the answer families' false
  accepts" made exact: a containment check cannot tell "13" or "3 or 4" from "3".
- reads (the answer is never graded): every answer family's edit is a false accept.
- exact (a whole token, and no second candidate of its kind): none.
- lenient (only "no wrong value stands"): answer-drop is a false accept, and the null run passes: vacuous.
- digits (a count in digits only): no false accept, and the count written "three" is a false reject.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import verimut

VARIANTS = ("containment", "reads", "exact", "lenient", "digits")
TASKS = ("q/count", "q/rent", "q/dentist", "q/standup", "q/restaurant")
ANSWER_FAULTS = ("answer-drop", "answer-wrong", "answer-superstring", "answer-hedge")

# The cells the answer families, the null run and the answer alternatives make, whatever the verifier: one value
# per answer (the question's date is an echo and is left alone). No legal date contains another, so the dentist's
# date has no superstring (SUPERSTRING_REFUSED).
DROP = {f"{t}:answer-drop" for t in TASKS}
WRONG = {
    "q/count:answer-wrong:1.number",
    "q/rent:answer-wrong:1.number",
    "q/dentist:answer-wrong:1.date",
    "q/standup:answer-wrong:1.time",
    "q/restaurant:answer-wrong:0.name",
}
SUPERSTRING = {
    "q/count:answer-superstring:1.number",
    "q/rent:answer-superstring:1.number",
    "q/standup:answer-superstring:1.time",
    "q/restaurant:answer-superstring:0.name",  # "Le Baratin" inside a longer name the state holds
}
SUPERSTRING_REFUSED = {"q/dentist:answer-superstring"}
HEDGE = {
    "q/count:answer-hedge:1.number",
    "q/rent:answer-hedge:1.number",
    "q/dentist:answer-hedge:1.date",
    "q/standup:answer-hedge:1.time",
    "q/restaurant:answer-hedge:0.name",
}
NULL = {f"{t}:null-run" for t in TASKS}
# Only the count has another form the instruction leaves open (the date's instruction fixes YYYY-MM-DD).
WORDS = "q/count:alt-answer:1.words"
ALT_REFUSED = {f"{t}:alt-answer" for t in TASKS if t != "q/count"}
ANSWER_CELLS = DROP | WRONG | SUPERSTRING | HEDGE


@pytest.fixture(scope="module")
def audits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`verimut audit tests.answerbench:<variant>` for each variant, once for the module."""
    base = tmp_path_factory.mktemp("answers")
    outs: dict[str, Path] = {}
    for v in VARIANTS:
        out = base / v
        result = verimut("audit", f"tests.answerbench:{v}", "--out", str(out), "-q")
        # the gate's default, false_accept>0: exact and digits have none
        assert result.returncode == (0 if v in ("exact", "digits") else 1), result.stderr
        outs[v] = out
    return outs


def cells(out: Path) -> dict[str, dict]:
    return {c["cell_id"]: c for c in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}


def outcomes(out: Path, *families: str) -> dict[str, str]:
    return {i: c["outcome"] for i, c in cells(out).items() if c["family"] in families}


def of(outcome: str, ids: set[str]) -> dict[str, str]:
    return dict.fromkeys(ids, outcome)


def test_every_variant_gets_the_same_answer_cells(audits):
    for v in VARIANTS:
        got = outcomes(audits[v], *ANSWER_FAULTS, "null-run", "alt-answer")
        assert set(got) == ANSWER_CELLS | SUPERSTRING_REFUSED | NULL | {WORDS} | ALT_REFUSED, v
        assert {i for i, o in got.items() if o == "refused"} == SUPERSTRING_REFUSED | ALT_REFUSED, v
        # no write in any task: every action family is refused, whatever the verifier
        assert set(outcomes(audits[v], *_action_families(audits[v])).values()) == {"refused", "control_pass"}, v


def _action_families(out: Path) -> set[str]:
    return {c["family"] for c in cells(out).values()} - {*ANSWER_FAULTS, "null-run", "alt-answer"}


def test_a_containment_verifier_accepts_the_superstring_and_the_hedge(audits):
    got = outcomes(audits["containment"], *ANSWER_FAULTS, "null-run")
    assert {i: o for i, o in got.items() if o != "refused"} == {
        **of("false_accept", SUPERSTRING | HEDGE),
        **of("rejected", DROP | WRONG | NULL),
    }
    ledger = cells(audits["containment"])
    thirteen = ledger["q/count:answer-superstring:1.number"]["evidence"]
    assert thirteen["detail"]["answer"] == "You have 13 meetings that day."
    assert thirteen["detail"]["reference_answer"] == "You have 3 meetings that day."
    assert thirteen["answer_differs"] == "the answer states the number '13' where the reference states '3'"
    hedge = ledger["q/restaurant:answer-hedge:0.name"]["evidence"]
    assert hedge["detail"]["answer"] == "Le Baratin or Chez Marie has the best rating."
    assert hedge["detail"]["pinned_by"] == "read #0 list_restaurants"
    # "3" or "three", as AgentDojo writes its checks: the count in words is still the right answer
    assert outcomes(audits["containment"], "alt-answer")[WORDS] == "alt_pass"
    summary = json.loads((audits["containment"] / "summary.json").read_text())
    assert {f["cell_id"] for f in summary["false_accepts"]} == SUPERSTRING | HEDGE


def test_a_verifier_that_never_reads_the_answer_accepts_every_answer_family(audits):
    got = outcomes(audits["reads"], *ANSWER_FAULTS, "null-run")
    assert {i: o for i, o in got.items() if o != "refused"} == {
        **of("false_accept", ANSWER_CELLS),
        **of("rejected", NULL),  # the empty run makes no read
    }
    ledger = cells(audits["reads"])
    assert ledger["q/dentist:answer-drop"]["evidence"]["answer_differs"] == (
        "the run gives no answer; the reference answers 'Your dentist appointment is on 2024-06-03.'"
    )
    assert ledger["q/standup:answer-wrong:1.time"]["evidence"]["detail"]["to"] == "11:00"  # the state's next time


def test_an_exact_token_verifier_gets_none(audits):
    got = outcomes(audits["exact"], *ANSWER_FAULTS, "null-run", "alt-answer")
    assert {i: o for i, o in got.items() if o != "refused"} == {
        **of("rejected", ANSWER_CELLS | NULL),
        WORDS: "alt_pass",
    }
    summary = json.loads((audits["exact"] / "summary.json").read_text())
    assert summary["false_accepts"] == [] and summary["false_rejects"] == []


def test_a_verifier_that_passes_the_empty_run_is_reported_vacuous(audits):
    got = outcomes(audits["lenient"], *ANSWER_FAULTS, "null-run")
    assert {i: o for i, o in got.items() if o != "refused"} == {
        **of("vacuous", NULL),
        **of("false_accept", DROP),  # no answer holds no wrong value either
        **of("rejected", WRONG | SUPERSTRING | HEDGE),
    }
    null = cells(audits["lenient"])["q/count:null-run"]
    assert null["verdict"] is True
    assert null["reason"] == "the verifier (answer-lenient) passes the empty run: no action, no answer"
    summary = json.loads((audits["lenient"] / "summary.json").read_text())
    # vacuous is a finding of its own, apart from the confirmed false accepts
    assert {f["cell_id"] for f in summary["false_accepts"]} == DROP
    assert summary["counts"]["null-run"] == {"vacuous": 5}
    # the gate names it: `--fail-on vacuous>0` (a resumed audit, so nothing is scored again)
    again = verimut(
        "audit", "tests.answerbench:lenient", "--out", str(audits["lenient"]), "-q", "--fail-on", "vacuous>0"
    )
    assert again.returncode == 1 and "vacuous = 5" in again.stdout, again.stdout
    exact = verimut("audit", "tests.answerbench:exact", "--out", str(audits["exact"]), "-q", "--fail-on", "vacuous>0")
    assert exact.returncode == 0, exact.stdout


def test_a_verifier_that_demands_digits_rejects_the_count_in_words(audits):
    got = outcomes(audits["digits"], *ANSWER_FAULTS, "null-run", "alt-answer")
    assert {i: o for i, o in got.items() if o != "refused"} == {
        **of("rejected", ANSWER_CELLS | NULL),
        WORDS: "false_reject",
    }
    summary = json.loads((audits["digits"] / "summary.json").read_text())
    [reject] = summary["false_rejects"]
    assert reject["cell_id"] == WORDS and reject["alternative"] is True
    assert "the number '3' written 'three' (words); the same value" in reject["reason"]
    assert summary["false_accepts"] == []


@pytest.mark.parametrize("variant", ["containment", "reads"])
def test_the_repair_rejects_every_answer_false_accept_and_no_correct_answer(audits, variant):
    """`verimut repair` writes one answer check per edited value (AnswerStates: the value whole, no second
    candidate); the count in words, a correct answer by another form, still passes."""
    result = verimut("repair", str(audits[variant]), "--benchmark", f"tests.answerbench:{variant}")
    assert result.returncode == 0, result.stdout + result.stderr
    r = json.loads((audits[variant] / "repair" / "summary.json").read_text())
    targets = SUPERSTRING | HEDGE if variant == "containment" else ANSWER_CELLS
    assert set(r["now_rejected"]) == targets and r["still_accepted"] == []
    assert r["controls"] == r["controls_still_passing"] == len(TASKS)
    assert r["new_false_rejects"] == [] and r["alternatives"] == r["alternatives_still_passing"] >= 1
    assert r["answer_checks"] == r["checks"] == len(TASKS)  # the tasks write nothing: answer checks only
    module = (audits[variant] / "repair" / "repaired_verifiers.py").read_text()
    assert "AnswerStates('number', '3', ['3'])" in module
    assert "AnswerStates('name', 'Le Baratin', ['Le Baratin'], rivals=['Chez Marie', 'Le Baratin Express'])" in module
