"""`verimut audit reward:FILE.py:FUNC --dataset D`: a reward file with one planted defect per answer family (each
found by its family), a correct reward file (no finding), and bad input (one line, exit 2; or a cell error)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, verimut

DATA = ROOT / "tests" / "data" / "rewards"
PLANTED = DATA / "planted.py"

# family -> (the planted function it finds, the outcome that finding is)
FOUND_BY = {
    "answer-drop": ("pays_blank", "false_accept"),
    "null-run": ("pays_blank", "vacuous"),
    "answer-blank": ("pays_blank", "false_accept"),
    "answer-echo": ("pays_length", "false_accept"),
    "answer-spray": ("pays_token", "false_accept"),
    "answer-shotgun": ("pays_token", "false_accept"),
    "answer-other": ("pays_format", "false_accept"),
    "answer-retract": ("first_tag", "false_accept"),
    "answer-denied": ("contains", "false_accept"),
    "answer-superstring": ("contains", "false_accept"),
    "answer-hedge": ("contains", "false_accept"),
    "answer-wrong": ("pays_any_number", "false_accept"),
    "answer-malformed": ("pays_on_error", "false_accept"),
    "answer-special-number": ("tolerant", "false_accept"),
    "alt-format": ("exact", "false_reject"),
    "alt-tag-prose": ("first_opener", "false_reject"),
}


def _audit(target: str, out: Path, *more: str, code: int = 0) -> list[dict]:
    result = verimut(
        "audit", f"reward:{target}", "--dataset", str(DATA / "data.jsonl"), "-o", str(out), "-q",
        "--executor", "inprocess", "--fail-on", "never", *more,
    )  # fmt: skip
    assert result.returncode == code, result.stderr
    return [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]


def test_every_answer_family_finds_its_planted_defect(tmp_path):
    from verimut.grammar.faults import of_grammar

    assert set(FOUND_BY) == set(of_grammar("answer")), "a family of the answer grammar has no planted defect here"
    for family, (func, outcome) in FOUND_BY.items():
        rows = _audit(f"{PLANTED}:{func}", tmp_path / family, "--family", family)
        found = [r for r in rows if r["family"] == family and r["outcome"] == outcome]
        assert found, (family, func, [(r["cell_id"], r["outcome"]) for r in rows])
        controls = [r for r in rows if r["family"] == "control"]
        assert controls and all(r["outcome"] == "control_pass" for r in controls), controls


def test_a_correct_reward_function_has_no_finding(tmp_path):
    rows = _audit(f"{DATA / 'correct.py'}:accuracy", tmp_path / "out")
    findings = [
        (r["cell_id"], r["outcome"]) for r in rows if r["outcome"] in ("false_accept", "false_reject", "vacuous")
    ]
    assert not findings
    assert not [r for r in rows if r["outcome"] == "error"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    numbers = summary["reward_numbers"]["accuracy"]
    assert numbers["false_pass_ceiling"] == 0.0 and numbers["false_fail_rate"] == 0.0
    assert numbers["lazy_policy_reward"] == 0.0 and numbers["known_bad"] > 0


def test_the_three_numbers_of_a_flawed_reward(tmp_path):
    _audit(f"{PLANTED}:pays_token", tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    numbers = summary["reward_numbers"]["pays_token"]
    # Listing every integer 0-1000 pays on the three numeric rows of four: a lazy policy earns 0.75 on average.
    assert numbers["lazy_policy_reward"] == 0.75 and numbers["lazy_policy_via"] == "answer-spray/integers"
    assert numbers["false_pass_ceiling"] == 1.0
    markdown = (tmp_path / "out" / "summary.md").read_text()
    assert "## The numbers trainers read first" in markdown and "| pays_token | 1 |" in markdown
    assert "- prompt: 'What is 3 + 4? Put the answer in <answer></answer>.'" in markdown
    assert 'id="reward-numbers"' in (tmp_path / "out" / "report.html").read_text()


@pytest.mark.parametrize(
    ("func", "reason", "code"),
    [
        ("raises", "verifier raised ValueError: empty completion", 0),
        ("says_none", "every reward function returned None", 0),
        # Every control is an error too: nothing was audited, which is said in one line, exit 2 (the cells are kept).
        ("says_string", "returned str ('1'), not a number", 2),
    ],
)
def test_a_reward_that_raises_or_gives_no_number_is_a_cell_error(tmp_path, func, reason, code):
    rows = _audit(f"{PLANTED}:{func}", tmp_path / "out", "--family", "answer-blank", code=code)
    errors = [r for r in rows if r["outcome"] == "error"]
    assert errors and all(reason in r["reason"] for r in errors), rows
    assert not [r for r in rows if r["outcome"] in ("false_accept", "control_pass") and r["verdict"] is None]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dataset", "nowhere.jsonl"], "dataset 'nowhere.jsonl' not found"),
        ([], "needs a dataset: --dataset FILE"),
        (["--dataset", str(DATA / "data.jsonl"), "--option", "reference=answer"], "the dataset has no column 'answer'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    result = verimut("audit", f"reward:{PLANTED}:exact", *args, "-o", str(tmp_path / "out"), "-q")
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_wrong_signature_and_a_missing_function_are_one_line_and_exit_2(tmp_path):
    for target, message in [
        (f"{PLANTED}:no_completions", "reward function 'no_completions' takes no `completions`"),
        (f"{PLANTED}:nowhere", "has no function 'nowhere'"),
        (f"{DATA / 'missing.py'}:f", "not found"),
    ]:
        result = verimut("audit", f"reward:{target}", "--dataset", str(DATA / "data.jsonl"), "-o", str(tmp_path / "o"))
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_dataset_is_only_for_reward_functions(tmp_path):
    result = verimut("audit", "examples.todo_bench:benchmark", "--dataset", str(DATA / "data.jsonl"))
    assert result.returncode == 2 and "--dataset is for a reward function" in result.stderr, result.stderr


def test_a_module_path_and_weights(tmp_path):
    """`reward:MODULE:f,g` (imported as `python -m` would, from the working directory), summed with weights."""
    out = tmp_path / "out"
    result = verimut(
        "audit", "reward:planted:exact,contains", "--dataset", "data.jsonl", "--option", "weights=0.5,0.5",
        "-o", str(out), "-q", "--executor", "inprocess", "--fail-on", "never", "--family", "answer-hedge",
        cwd=DATA,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    control = next(r for r in rows if r["cell_id"] == "exact+contains/0:control")
    assert control["outcome"] == "control_pass" and control["evidence"]["reward"] == 1.0
    # "7 or 8" in the tag: `contains` pays its half, `exact` does not: 0.5 of a full 1.0, rejected
    hedged = [r for r in rows if r["family"] == "answer-hedge" and r["task"] == "exact+contains/0"]
    assert hedged and all(r["evidence"]["reward"] == 0.5 and r["outcome"] == "rejected" for r in hedged), hedged


def test_a_function_that_reads_message_content_gets_message_lists(tmp_path):
    rows = _audit(f"{PLANTED}:message_content", tmp_path / "out", "--family", "answer-hedge")
    controls = [r for r in rows if r["family"] == "control"]
    assert controls and all(r["outcome"] == "control_pass" for r in controls), controls


def test_duplicate_prompts_and_conflicting_labels_are_named(tmp_path):
    out = tmp_path / "out"
    result = verimut(
        "audit", f"reward:{DATA / 'correct.py'}:accuracy", "--dataset", str(DATA / "conflicting.jsonl"), "-o", str(out),
        "-q", "--executor", "inprocess", "--fail-on", "never", "--family", "answer-hedge",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    provenance = json.loads((out / "manifest.json").read_text())["provenance"]
    assert provenance["conflicting_labels"] == "1 prompt(s) with different reference answers: accuracy/0=accuracy/1"
    assert provenance["duplicate_prompts"].startswith("1 prompt(s) given more than once")
    # scored beside the three numbers, per reward function, in summary.json and summary.md
    numbers = json.loads((out / "summary.json").read_text())["reward_numbers"]["accuracy"]
    assert (numbers["duplicate_prompts"], numbers["conflicting_labels"]) == (1, 1)
    assert "| 1 / 1 |" in (out / "summary.md").read_text()


def test_a_reward_that_varies_on_one_completion_is_named_unstable(tmp_path):
    # falsepass's P11: the same completion scored ten times. `flaky` fails every third call of the reference.
    _audit(f"{PLANTED}:flaky", tmp_path / "flaky", "--family", "answer-hedge")
    numbers = json.loads((tmp_path / "flaky" / "summary.json").read_text())["reward_numbers"]["flaky"]
    assert numbers["unstable"].startswith("flaky/0 reference: 2 distinct in 10 calls (0.0, 1.0)"), numbers
    assert "unstable_reward" in json.loads((tmp_path / "flaky" / "manifest.json").read_text())["provenance"]
    assert "| **no**: flaky/0 reference" in (tmp_path / "flaky" / "summary.md").read_text()
    _audit(f"{DATA / 'correct.py'}:accuracy", tmp_path / "correct", "--family", "answer-hedge")
    numbers = json.loads((tmp_path / "correct" / "summary.json").read_text())["reward_numbers"]["accuracy"]
    assert numbers["unstable"] is None and numbers["repeats_checked"] == 6  # 3 rows: the reference and a wrong one


def test_the_stability_check_on_every_core_finds_what_it_finds_in_one_process(tmp_path):
    # The ten calls of each completion run in the pool's workers (`prepare`): the same completions, the same verdict.
    _audit(f"{PLANTED}:flaky", tmp_path / "one", "--family", "answer-hedge")
    _audit(f"{PLANTED}:flaky", tmp_path / "pool", "--family", "answer-hedge", "--executor", "pool", "--workers", "2")
    numbers = [
        json.loads((tmp_path / d / "summary.json").read_text())["reward_numbers"]["flaky"] for d in ("one", "pool")
    ]
    assert numbers[1]["unstable"] == numbers[0]["unstable"] and numbers[1]["unstable"] is not None
    assert numbers[1]["repeats_checked"] == numbers[0]["repeats_checked"] == 6
