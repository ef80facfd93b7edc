"""A worker-side benchmark in plain JSON terms, served by verimut/adapters/worker.py in its own process.

It imports only the standard library, as a benchmark in a clashing environment would. Inside
verimut's scoring workers (VERIMUT_WORKER is set there, and inherited by this process), some
tasks misbehave: t/crash kills this process, t/midhang hangs in the verifier on claim-only.
"""

from __future__ import annotations

import copy
import os
import time

TASKS = {"t/ok": "x", "t/crash": "y", "t/midhang": "z"}


class Bench:
    name, version, telemetry = "remote-todo", "1", ()

    def provenance(self):
        return {"remote-todo": "1", "pid-independent": "yes"}

    def tasks(self):
        return list(TASKS)

    def instruction(self, task):
        return f"Add '{TASKS[task]}' to my list."

    def reset(self, task):
        if os.environ.get("REMOTE_TODO_RESETS"):  # which worker process reset which task, for the tests to read
            with open(os.environ["REMOTE_TODO_RESETS"], "a") as f:
                f.write(f"{os.getpid()} {os.environ.get('VERIMUT_WORKER', 'manifest')} {task}\n")
        return {"task": task, "items": []}

    def reference(self, task, episode):
        return {"actions": [{"name": "add_item", "args": {"text": TASKS[task]}}], "answer": "Done."}

    def execute(self, episode, action):
        if os.environ.get("VERIMUT_WORKER") and episode["task"] == "t/crash":
            os._exit(7)
        episode["items"].append(action["args"]["text"])
        return {"output": "ok", "error": None}

    def is_write(self, action):
        return action["name"] == "add_item"

    def snapshot(self, episode):
        return {"items": list(episode["items"])}

    def verify(self, episode, run):
        if os.environ.get("VERIMUT_WORKER") and episode["task"] == "t/midhang" and not episode["items"]:
            time.sleep(3600)
        return {"passed": TASKS[episode["task"]] in episode["items"], "detail": "item present", "checks": {}}

    def fork(self, episode):
        return copy.deepcopy(episode)
