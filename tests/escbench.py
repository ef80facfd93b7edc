"""A test benchmark whose task data carries terminal escapes: an OSC title change, a colour, a bidi override.

`verimut ls` and `show` must print them as inert text (`\\x1b`), never pass them to the terminal.
"""

from __future__ import annotations

from examples.todo_bench import TodoBench

from verimut.benchmark import Verdict
from verimut.run import Action, Run, Step

EVIL = "\x1b]0;pwned\x07\x1b[31m\u202e"
TASK = f"esc/add{EVIL}"


class EscBench(TodoBench):
    name = "esc"

    def tasks(self):
        return [TASK]

    def instruction(self, task):
        return f"Add 'milk{EVIL}' to my list."

    def reset(self, task):
        return {"task": task, "items": []}

    def reference(self, task, episode):
        return Run((Action("add_item", {"text": f"milk{EVIL}"}),), answer=f"Done{EVIL}.")

    def execute(self, episode, action):
        episode["items"].append(action.args["text"])
        return Step(f"ok{EVIL}")

    def verify(self, episode, run):
        return Verdict(f"milk{EVIL}" in episode["items"], f"item present{EVIL}", {f"present{EVIL}": True})


benchmark = EscBench()
