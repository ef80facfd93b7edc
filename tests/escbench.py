"""A test benchmark whose task data carries terminal escapes: an OSC title change, a colour, a bidi override.

`verimut ls` and `show` must print them as inert text (`\\x1b`), never pass them to the terminal; so must
the tables an audit prints, and summary.md, report.html and the repair module must not hold them raw.
The task id also holds rich markup (a stray closing tag, which rich would raise on), and the verifier's
message an 8-bit CSI (C1) "clear screen" and a markup hyperlink.
"""

from __future__ import annotations

from examples.todo_bench import TodoBench

from verimut import Action, Run, Step, Verdict

EVIL = "\x1b]0;pwned\x07\x1b[31m\u202e"
MARKUP = "[/]"
C1 = "\x9b2J"
LINK = "[link=https://evil.example/]here[/link]"
TASK = f"esc/add{EVIL}{MARKUP}"


class EscBench(TodoBench):
    name = "esc"

    def tasks(self):
        return [TASK]

    def instruction(self, task):
        return f"Add 'milk{EVIL}' to my list.{C1}"

    def reset(self, task):
        return {"task": task, "items": []}

    def reference(self, task, episode):
        return Run((Action("add_item", {"text": f"milk{EVIL}"}),), answer=f"Done{EVIL}.")

    def execute(self, episode, action):
        episode["items"].append(action.args["text"])
        return Step(f"ok{EVIL}{C1}")

    def verify(self, episode, run):
        present = f"milk{EVIL}" in episode["items"]
        return Verdict(present, f"item present{EVIL}{C1}{LINK}", {f"present{EVIL}": True})


benchmark = EscBench()
