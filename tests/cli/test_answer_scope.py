"""Findings only about an answer the task asks for (issue 43, item 3), on examples/todo_bench.py with an answer
channel declared (tests/todo_answers.py).

Its edit tasks say "Done." (or "Done, I told Mum."): no value any task asks for, so there is no answer to drop and
no answer fault; 0.4 made two confirmed false accepts of dropping them, which `repair` could not close. Its
question task's answer is a name a read gives, and every answer family still acts on it.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import verimut

ANSWER_FAULTS = ("answer-drop", "answer-wrong", "answer-superstring", "answer-hedge")


def test_a_reply_that_states_nothing_asked_for_has_no_answer_to_drop(tmp_path: Path):
    out = tmp_path / "todo"
    done = verimut("audit", "tests.todo_answers:benchmark", "--out", str(out), "-q")
    assert done.returncode == 1, done.stderr  # the duplicated item the example is about: still found
    rows = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    by_id = {r["cell_id"]: r for r in rows}
    for task, answer in (("todo/add_milk", "Done."), ("todo/add_call", "Done, I told Mum.")):
        for fam in ANSWER_FAULTS:
            row = by_id[f"{task}:{fam}"]
            assert row["outcome"] == "refused", row
            assert f"the reference answer {answer!r} states no value the task asks for" in row["evidence"]["edit"]
    assert by_id["todo/first:answer-drop"]["outcome"] == "rejected"  # "Water Plants", read: an answer to drop
    assert by_id["todo/first:answer-wrong:1.name"]["outcome"] == "rejected"
    false_accepts = {r["family"] for r in rows if r["outcome"] == "false_accept"}
    assert false_accepts and not false_accepts & set(ANSWER_FAULTS), false_accepts
    assert "extra" in false_accepts
