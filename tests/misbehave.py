"""Plug-in benchmarks that misbehave on purpose, as the second hardening probe found them (issue 27).

Each is the to-do example with one mistake a plug-in author makes: tests/cli/test_misbehave.py audits
each through the real command line and checks what the user sees.
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time

import numpy as np
from examples.todo_bench import TASKS, TodoBench

from verimut import Step, Verdict


def _done(episode) -> bool:
    return TASKS[episode["task"]].split("'")[1] in episode["items"]


class NotABool(TodoBench):
    """A verdict whose `passed` is not a bool: "no" (truthy), 1, None, or a numpy bool (which is fine)."""

    def __init__(self, failing: object, passing: object = True) -> None:
        self.failing, self.passing = failing, passing

    def verify(self, episode, run):
        done = _done(episode) and len(episode["items"]) == 2
        return Verdict(self.passing if done else self.failing, "checked")  # type: ignore[arg-type]


plain_bool = NotABool(False)  # the same verifier, answering in real bools: what numpy_bool must match
says_no = NotABool("no")
says_one = NotABool(0, passing=1)
says_none = NotABool(None)
numpy_bool = NotABool(np.bool_(False), passing=np.bool_(True))


class ReturnsString(TodoBench):
    def verify(self, episode, run):
        return "passed"


returns_string = ReturnsString()


class Exits(TodoBench):
    """A verifier that calls sys.exit on a run with a repeated item (not on the reference runs)."""

    def verify(self, episode, run):
        if len(episode["items"]) != len(set(episode["items"])):
            sys.exit(3)
        return super().verify(episode, run)


exits = Exits()


class ExitsOnCleanStart(TodoBench):
    """A verifier that calls sys.exit when graded on the untouched start (the manifest grades it there)."""

    def verify(self, episode, run):
        if episode["items"] == ["water plants"]:
            sys.exit(0)
        return super().verify(episode, run)


exits_on_clean_start = ExitsOnCleanStart()


class AllFail(TodoBench):
    def verify(self, episode, run):
        return Verdict(False, "never")


all_fail = AllFail()


class Mutates(TodoBench):
    """`execute` that consumes the action's arguments (pops them), as a careless adapter does."""

    def execute(self, episode, action):
        if action.name == "add_item":
            episode["items"].append(action.args.pop("text"))
            return Step("ok")
        return super().execute(episode, action)


mutates = Mutates()


class RandomSnapshot(TodoBench):
    """A snapshot with a value that differs on every call (a timestamp, a random number)."""

    def snapshot(self, episode):
        return {"items": list(episode["items"]), "clock": {"now": random.random()}}


random_snapshot = RandomSnapshot()


class OddSnapshot(TodoBench):
    """Snapshots that are not plain data: a set, tuple keys, a structure that contains itself, an object."""

    def __init__(self, shape: str) -> None:
        self.shape = shape

    def snapshot(self, episode):
        items = list(episode["items"])
        if self.shape == "set":
            return {"items": set(items)}
        if self.shape == "sorted-list":
            return {"items": sorted(set(items))}
        if self.shape == "tuple-key":
            return {"items": {(i, "x"): True for i in items}}
        if self.shape == "recursive":
            state: dict = {"items": items}
            state["items_again"] = {"state": state}
            return state
        return {"items": items, "handle": threading.Lock()}


set_snapshot = OddSnapshot("set")
sorted_list = OddSnapshot("sorted-list")  # what a set is read as
tuple_keys = OddSnapshot("tuple-key")
recursive = OddSnapshot("recursive")
an_object = OddSnapshot("object")


class LeaksThread(TodoBench):
    """A verifier that starts a non-daemon thread and never stops it."""

    def verify(self, episode, run):
        threading.Thread(target=time.sleep, args=(3600,), name="leaked-by-verifier").start()
        return super().verify(episode, run)


leaks_thread = LeaksThread()


class BigField(TodoBench):
    """A 5 MB field whose value depends on the list, so every edit changes it."""

    SIZE = 5 * 1024 * 1024

    def snapshot(self, episode):
        seed = ",".join(episode["items"])
        blob = (seed * (self.SIZE // max(1, len(seed)) + 1))[: self.SIZE]
        return {"items": list(episode["items"]), "blob": {"data": blob}}


big_field = BigField()


class DuplicateTasks(TodoBench):
    def tasks(self):
        return [*TASKS, next(iter(TASKS))]


duplicate_tasks = DuplicateTasks()


class SlowVerifier(TodoBench):
    """A verifier that takes `VERIMUT_TEST_SLEEP` seconds (default 0.2): to interrupt an audit midway."""

    def verify(self, episode, run):
        time.sleep(float(os.environ.get("VERIMUT_TEST_SLEEP", "0.2")))
        return super().verify(episode, run)


slow = SlowVerifier()


class NewlineTask(TodoBench):
    """A task id holding a newline and code: the repaired module's comments must not end at it."""

    ID = "todo/add_milk\nPLANTED = 1  # "

    def tasks(self):
        return [self.ID, "todo/add_call"]

    def instruction(self, task):
        return TASKS["todo/add_milk" if task == self.ID else task]

    def reference(self, task, episode):
        return super().reference("todo/add_milk" if task == self.ID else task, episode)

    def reset(self, task):
        return {"task": "todo/add_milk" if task == self.ID else task, "items": ["water plants"]}


newline_task = NewlineTask()
