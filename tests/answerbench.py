"""A question benchmark whose verifiers grade the run's final answer, in five variants (issue 29's tests).

Each task asks a question a read answers: a count, an amount, a date, a time, a restaurant's name. The reference
run makes the read and says the answer; nothing is written. The variants differ only in how `verify` grades the
answer, each written as a benchmark author would (its own regular expressions, not verimut's `answers`):

- `containment`: `value in answer`, or a count's word ("3" or "three"), as AgentDojo's checks are written;
- `exact`: the value stands as a whole token of its kind, and no other candidate of that kind does;
- `lenient`: no wrong candidate of the kind stands (`all(...)` over none passes: the empty answer too);
- `digits`: `exact`, with a count accepted in digits only ("three" is rejected);
- `reads`: the run made the task's read; the answer is never looked at.

Load one as `tests.answerbench:<variant>`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from verimut import Action, Run, Step, Verdict
from verimut.core.run import AnswerChannel  # not (yet) on the package face

NUMBER, DATE, TIME, NAME = "number", "date", "time", "name"


class Task:
    def __init__(self, instruction: str, read: Action, answer: str, kind: str, value: str) -> None:
        self.instruction, self.read, self.answer, self.kind, self.value = instruction, read, answer, kind, value


TASKS = {
    "q/count": Task(
        "How many meetings do I have on 2024-05-15?",
        Action("list_events", {"date": "2024-05-15"}),
        "You have 3 meetings that day.",
        NUMBER,
        "3",
    ),
    "q/rent": Task(
        "How much is my rent?",
        Action("list_bills"),
        "Your rent is 1200 a month.",
        NUMBER,
        "1200",
    ),
    # The instruction fixes the date's form, so no other form of it is an alternative run.
    "q/dentist": Task(
        "When is my dentist appointment? Give the date as YYYY-MM-DD.",
        Action("search_events", {"query": "dentist"}),
        "Your dentist appointment is on 2024-06-03.",
        DATE,
        "2024-06-03",
    ),
    "q/standup": Task(
        "What time does the standup start on 2024-05-15?",
        Action("list_events", {"date": "2024-05-15"}),
        "It starts at 9:30.",
        TIME,
        "9:30",
    ),
    # "Le Baratin Express" holds the right name inside a wrong one: a containment check takes either.
    "q/restaurant": Task(
        "Which restaurant in Paris has the best rating?",
        Action("list_restaurants", {"city": "Paris"}),
        "Le Baratin has the best rating.",
        NAME,
        "Le Baratin",
    ),
}

START: dict[str, Any] = {
    "events": [
        {"id": "e1", "title": "standup", "date": "2024-05-15", "start": "9:30"},
        {"id": "e2", "title": "design review", "date": "2024-05-15", "start": "11:00"},
        {"id": "e3", "title": "one-to-one", "date": "2024-05-15", "start": "16:00"},
        {"id": "e4", "title": "dentist", "date": "2024-06-03", "start": "8:15"},
    ],
    "bills": [{"item": "rent", "amount": 1200}, {"item": "gym", "amount": 45}],
    "restaurants": [
        {"name": "Le Baratin", "city": "Paris", "rating": 4.8},
        {"name": "Le Baratin Express", "city": "Paris", "rating": 3.9},
        {"name": "Chez Marie", "city": "Paris", "rating": 4.5},
    ],
}
NAMES = tuple(r["name"] for r in START["restaurants"])
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def candidates(kind: str, answer: str, words: bool = True) -> set[str]:
    """Every value of `kind` the answer states, normalized (a count in words as its digits when `words`)."""
    if kind == NUMBER:
        found = {n.replace(",", "") for n in re.findall(r"(?<![\w.,:-])\d[\d,]*(?:\.\d+)?(?![\w:-]|[.,]\d)", answer)}
        if words:
            found |= {str(WORDS.index(w.lower())) for w in re.findall(r"[A-Za-z]+", answer) if w.lower() in WORDS}
        return found
    if kind == DATE:
        return set(re.findall(r"(?<![\d-])\d{4}-\d{2}-\d{2}(?![\d-])", answer))
    if kind == TIME:
        return set(re.findall(r"(?<![\d:])\d{1,2}:\d{2}(?![\d:])", answer))
    # A name: the known names, the longest first, so "Le Baratin Express" is read as itself.
    by_length = "|".join(re.escape(n) for n in sorted(NAMES, key=len, reverse=True))
    return set(re.findall(rf"(?<!\w)(?:{by_length})(?!\w)", answer))


def containment_check(task: Task, run: Run) -> bool:
    forms = [task.value] + ([WORDS[int(task.value)]] if task.kind == NUMBER and int(task.value) < len(WORDS) else [])
    return any(f in run.answer for f in forms)


def exact_check(task: Task, run: Run) -> bool:
    return candidates(task.kind, run.answer) == {task.value}


def lenient_check(task: Task, run: Run) -> bool:
    return candidates(task.kind, run.answer) <= {task.value}


def digits_check(task: Task, run: Run) -> bool:
    return candidates(task.kind, run.answer, words=False) == {task.value}


def reads_check(task: Task, run: Run) -> bool:
    return task.read in run.actions


class AnswerBench:
    version, telemetry = "1", ()
    answer_channel = AnswerChannel("the run's final answer")

    def __init__(self, variant: str, check: Callable[[Task, Run], bool]) -> None:
        self.name, self.check = f"answer-{variant}", check

    def provenance(self) -> dict[str, str]:
        return {"answerbench": self.version}

    def tasks(self) -> list[str]:
        return list(TASKS)

    def instruction(self, task: str) -> str:
        return TASKS[task].instruction

    def reset(self, task: str) -> dict[str, Any]:
        return {"task": task, **copy.deepcopy(START)}

    def reference(self, task: str, episode: dict[str, Any]) -> Run:
        return Run((TASKS[task].read,), answer=TASKS[task].answer)

    def execute(self, episode: dict[str, Any], action: Action) -> Step:
        args = action.args
        if action.name == "list_events":
            return Step(repr([e for e in episode["events"] if e["date"] == args.get("date")]))
        if action.name == "search_events":
            return Step(repr([e for e in episode["events"] if args.get("query", "") in e["title"]]))
        if action.name == "list_bills":
            return Step(repr(episode["bills"]))
        if action.name == "list_restaurants":
            return Step(repr([r for r in episode["restaurants"] if r["city"] == args.get("city")]))
        return Step("", error=f"no tool {action.name}")

    def is_write(self, action: Action) -> bool:
        return False

    def snapshot(self, episode: dict[str, Any]) -> dict[str, Any]:
        return {k: copy.deepcopy(v) for k, v in episode.items() if k != "task"}

    def verify(self, episode: dict[str, Any], run: Run) -> Verdict:
        return Verdict(self.check(TASKS[episode["task"]], run), self.name)


containment = AnswerBench("containment", containment_check)
exact = AnswerBench("exact", exact_check)
lenient = AnswerBench("lenient", lenient_check)
digits = AnswerBench("digits", digits_check)
reads = AnswerBench("reads", reads_check)
