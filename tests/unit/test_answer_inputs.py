"""Answers that are not what a reader expects (issue 43, minor list): an answer that is not text is the adapter's
mistake, named in one line at the seam (0.4: an internal error in the manifest build); the numbers of a terminal
escape sequence are no values to edit.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.todo_answers import TodoAnswers

from verimut import Run
from verimut.core.benchmark import resolve
from verimut.core.errors import AuditError
from verimut.grammar import answers


class Says(TodoAnswers):
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def reference(self, task: str, episode: dict[str, Any]) -> Run:
        return Run(super().reference(task, episode).actions, answer=self.answer)


@pytest.mark.parametrize("answer", [b"Done.", None, {"a": 1}, 3])
def test_an_answer_that_is_not_text_is_one_line_naming_its_type(answer: Any):
    bench = resolve(Says(answer))
    with pytest.raises(AuditError) as raised:
        bench.reference("todo/add_milk", bench.reset("todo/add_milk"))
    said = str(raised.value)
    assert said.startswith(
        f"todo-answers's reference run for 'todo/add_milk' has an answer of type {type(answer).__name__}"
    )
    assert said.endswith('not str: give the answer as text ("" for none)') and "\n" not in said


def test_a_reference_that_is_not_a_run_is_one_line():
    class Tuple(TodoAnswers):
        def reference(self, task: str, episode: dict[str, Any]) -> Any:
            return tuple(super().reference(task, episode).actions)

    bench = resolve(Tuple())
    with pytest.raises(AuditError, match=r"^todo-answers's reference\('todo/add_milk'\) returned tuple, not a Run$"):
        bench.reference("todo/add_milk", bench.reset("todo/add_milk"))


def test_the_numbers_of_a_terminal_escape_are_no_values():
    coloured = "\x1b[31m3\x1b[0m apples, \x1b]0;title 42\x07 \x9b2J"
    assert [(v.text, v.kind, v.start) for v in answers.values(coloured)] == [("3", answers.NUMBER, 5)]
    edited = answers.replace(coloured, answers.values(coloured)[0], "4")
    assert edited == "\x1b[31m4\x1b[0m apples, \x1b]0;title 42\x07 \x9b2J"  # the codes untouched


def test_an_answer_longer_than_a_mebibyte_is_one_line():
    # 0.4: a 10.8 MB answer went into every edited run of its task: a 104 MB manifest of one task's cells
    bench = resolve(Says("Done. " + "x" * (1024 * 1024)))
    with pytest.raises(AuditError) as raised:
        bench.reference("todo/add_milk", bench.reset("todo/add_milk"))
    assert str(raised.value) == (
        "todo-answers's reference run for 'todo/add_milk' has an answer of 1,048,582 characters: verimut audits "
        "answers of at most 1,048,576 (every edited run carries it); audit the other tasks with --task"
    )
