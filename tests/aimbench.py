"""readbench (tests/readbench.py) with one more task, whose write lands where another task's does: two writes of the
suite's library reach the to-do list, which `frame/theme`'s verifier never reads (a confirmed blind spot). For the
aimed out-of-scope search (`--aim`): one of the two is planted there, the other reported as proven unchecked.

- `frame/pin`: puts "call mum" at the top of the list (`pin_todo`, a tool no other task calls); its verifier reads
  the first to-do's text.
"""

from __future__ import annotations

from readbench import ReadBench, _verdict
from verimut import Action, Run, Step, Verdict
from verimut.adapters.recording import recorded
from verimut.core.reads import STATE

PIN = "frame/pin"


def _pinned(state: dict) -> Verdict:
    return Verdict(state["todos"][0]["text"] == "call mum", "call mum is first")


class AimBench(ReadBench):
    name = "aimbench"

    def __init__(self) -> None:
        super().__init__()
        self._tasks.append(PIN)

    def instruction(self, task):
        return "Put 'call mum' at the top of my to-do list." if task == PIN else super().instruction(task)

    def reference(self, task, episode):
        if task == PIN:
            return Run((Action("pin_todo", {"text": "call mum"}),), answer="Done.")
        return super().reference(task, episode)

    def execute(self, episode, action):
        if action.name == "pin_todo":
            todos = episode["state"]["todos"]
            todos.insert(0, {"id": len(todos) + 1, "text": action.args["text"]})
            return Step("ok")
        return super().execute(episode, action)

    def verify(self, episode, run):
        task, state = episode["task"], episode["state"]
        return _pinned(state) if task == PIN else _verdict(task, state)

    def verify_reading(self, episode, run):
        task = episode["task"]
        judge = _pinned if task == PIN else (lambda state: _verdict(task, state))
        return recorded({STATE: episode["state"]}, lambda views: judge(views[STATE]))


benchmark = AimBench()
