"""Plug-ins that are wrong in the ways a user gets them wrong: each must be a one-line error (exit 2)."""

from __future__ import annotations

from examples.todo_bench import TodoBench

AClass = TodoBench  # the class, not an instance


def no_version():  # a factory without the version parameter
    return TodoBench()


def raises(version):
    raise RuntimeError("the plug-in could not open its data\nsecond line of detail")


class EmptyBench(TodoBench):
    def tasks(self):
        return []


empty = EmptyBench()
