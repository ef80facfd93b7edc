"""A test benchmark whose cells misbehave inside workers: some hang, one kills its process.

It misbehaves only in a worker process (executors set VERIMUT_WORKER there), so that
building the manifest, which replays references in the main process, still works.
"""

from __future__ import annotations

import os
import time

from examples.todo_bench import TodoBench

from verimut import Action, Run, Step


class TroubleBench(TodoBench):
    name = "trouble"

    def tasks(self):
        return ["t/ok", "t/hang", "t/die", "t/midhang", "t/dielate"]

    def instruction(self, task):
        return "Add 'x' to my list."

    def reset(self, task):
        return {"task": task, "items": []}

    def reference(self, task, episode):
        if task == "t/midhang":
            return Run((Action("add_item", {"text": "x"}), Action("add_item", {"text": "y"})), "Done.")
        return Run((Action("add_item", {"text": "x"}),), "Done.")

    def execute(self, episode, action):
        if os.environ.get("VERIMUT_WORKER"):
            if episode["task"] == "t/hang":
                time.sleep(3600)
            if episode["task"] == "t/die":
                os._exit(3)
            if episode["task"] == "t/dielate" and episode["items"]:
                os._exit(4)  # a second write kills the worker: extra and extra-ni die, one after the other
        episode["items"].append(action.args["text"])
        return Step("ok")

    def verify(self, episode, run):
        from verimut.core.benchmark import Verdict

        if os.environ.get("VERIMUT_WORKER") and episode["task"] == "t/midhang" and episode["items"] == ["y"]:
            time.sleep(3600)  # omit:at-0 hangs, inside a batch: the cells before and after it must still be scored
        return Verdict("x" in episode["items"], "x present")


benchmark = TroubleBench()
