"""examples/todo_bench.py with an answer channel declared (issue 43, item 3): its reference runs say "Done." after
the edit each task asks for, and one task asks a question whose answer the run reads.

The verifier grades the list and never the answer, so an answer family that plants a fault on "Done." makes a false
accept no one would accept as one: the tasks that ask for an edit ask for no answer. Load as
`tests.todo_answers:benchmark`.
"""

from __future__ import annotations

from typing import Any

from examples.todo_bench import TASKS, TodoBench

from verimut import Action, Run, Verdict
from verimut.core.run import AnswerChannel

QUESTION = "todo/first"
INSTRUCTIONS = {**TASKS, QUESTION: "What is the first of my items?"}


class TodoAnswers(TodoBench):
    name = "todo-answers"
    answer_channel = AnswerChannel("the run's final answer")

    def tasks(self) -> list[str]:
        return list(INSTRUCTIONS)

    def instruction(self, task: str) -> str:
        return INSTRUCTIONS[task]

    def reset(self, task: str) -> dict[str, Any]:
        return {"task": task, "items": ["Water Plants"]}

    def reference(self, task: str, episode: dict[str, Any]) -> Run:
        if task == QUESTION:
            return Run((Action("list_items"),), answer="The first item is Water Plants.")
        run = super().reference(task, episode)
        # A capitalised word of prose no instruction or read gives ("Done", "Mum") is no name.
        return run if task != "todo/add_call" else Run(run.actions, answer="Done, I told Mum.")

    def verify(self, episode: dict[str, Any], run: Run) -> Verdict:
        if episode["task"] == QUESTION:  # graded by containment, as the question benchmarks' checks are written
            return Verdict("Water Plants" in run.answer, "answer names the first item")
        return super().verify(episode, run)


benchmark = TodoAnswers()
