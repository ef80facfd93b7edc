"""A worker-side benchmark with every optional capability and attribute, served by worker.py in its own process.

Standard library only, like tests/remote_todo.py. Its tasks are of two kinds (t/inject is an "injection"
task, with the `goal` contract), it declares the form grammar and a form per task, and it records in its
episodes what verimut asked of it (patched values, closed episodes), so a test can see each call arrive.
"""

from __future__ import annotations

import copy
import os
from typing import ClassVar

TASKS = {"t/add": "milk", "t/inject": "spam"}


class Bench:
    name, version, telemetry = "remote-kinds", "1", ("log",)
    grammar = "form"
    concurrency = 2
    markers = frozenset({"turn"})
    swap_suites = ("t",)
    grades_in_place = True
    replays_vary = True
    contracts: ClassVar[dict[str, str]] = {"injection": "goal"}
    assigned_keys = ("items",)
    trace_args: ClassVar[dict[str, tuple[str, ...]]] = {"send": ("to",)}
    target_args = frozenset({"owner"})

    prepared = ""

    def prepare(self, each):
        # Work done once, in the worker, when the manifest is built: its result shows in the provenance.
        self.prepared = ",".join(each(str.upper, list(TASKS)))

    def provenance(self):
        return {"remote-kinds": "1", **({"prepared": self.prepared} if self.prepared else {})}

    def tasks(self):
        return list(TASKS)

    def instruction(self, task):
        return f"Add '{TASKS[task]}' to my list."

    def reset(self, task):
        return {"task": task, "items": [], "log": []}

    def reference(self, task, episode):
        return {"actions": [{"name": "add_item", "args": {"text": TASKS[task]}}], "answer": "Done."}

    def execute(self, episode, action):
        episode["items"].append(action["args"]["text"])
        return {"output": "ok", "error": None}

    def is_write(self, action):
        return action["name"] == "add_item"

    def snapshot(self, episode):
        return {"items": list(episode["items"]), "log": list(episode["log"])}

    def verify(self, episode, run):
        return {"passed": TASKS[episode["task"]] in episode["items"], "detail": "item present", "checks": {}}

    def fork(self, episode):
        return copy.deepcopy(episode)

    def verify_as(self, task, episode, run):
        return {"passed": TASKS[task] in episode["items"], "detail": f"as {task}", "checks": {}}

    def explain(self, task, collections):
        return f"{task}'s verifier reads only whether the item is there, not {', '.join(collections)}"

    def verifier_source(self, task):
        return ["remote_kinds.py", 52, "Bench.verify"]

    def form(self, task):
        field = {"name": "item", "label": "Item", "type": "string", "default": "", "template": TASKS[task]}
        return {"table": "list", "task_fields": ["item"], "fields": [field]}

    def kind(self, task):
        return "injection" if task == "t/inject" else "user"

    def verify_reading(self, episode, run):
        return self.verify(episode, run), {"value": [f"state.items.{i}" for i in range(len(episode["items"]))]}

    def reads_trace(self, task):
        return task == "t/inject"

    def idle_writes(self, task):
        return [0] if task == "t/inject" else []

    def sanctioned(self, task):
        return ["add_item"] if task == "t/add" else []

    def pristine(self, task):
        # The task's world before its setup: an empty list (what the setup broke, here nothing).
        return {"items": [], "log": []}

    def page_writes(self, task, run):
        # An item the task never names: another task's text (a page's own element, in a browser benchmark).
        named = {a["args"].get("text") for a in run["actions"]}
        return [{"name": "add_item", "args": {"text": t}} for t in TASKS.values() if t not in named][:1]

    def patch(self, episode, path, value):
        target = episode
        for key in path[:-1]:
            target = target[int(key)] if isinstance(target, list) else target[key]
        last = path[-1]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    def close(self, episode):
        closed = os.environ.get("REMOTE_KINDS_CLOSED")
        if closed:
            with open(closed, "a") as f:
                f.write(episode["task"] + "\n")


class Plain:
    """The same benchmark without kinds, grammar or any other optional member: a remote adapter gets none of them."""

    name, version, telemetry = "remote-plain", "1", ()
    provenance, tasks, instruction = Bench.provenance, Bench.tasks, Bench.instruction
    reset, reference, execute = Bench.reset, Bench.reference, Bench.execute
    is_write, snapshot, verify = Bench.is_write, Bench.snapshot, Bench.verify
