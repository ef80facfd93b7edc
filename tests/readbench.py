"""A plug-in benchmark whose verifiers read known parts of the state, for the read recording (core/reads.py).

framebench's tasks and state (a to-do list, a contact book, a settings record), with verifiers written to read:

- `frame/theme`: one field, `settings.theme`, and nothing of `todos` or `contacts`;
- `frame/todo`: the to-dos' texts, through a helper function and a list comprehension;
- `frame/contact`: the whole state (an equality with the expected end);
- `frame/call_bob`: the contacts, by a lookup the recording cannot see (`dict.__getitem__` called on the state
  itself, past the recording view): its map would call `contacts` unread, and flipping it shows it is read.

It records reads with verimut's recording view (adapters/recording.py) and sets values for the flip checks.
"""

from __future__ import annotations

from framebench import TASKS, FrameBench, expected_end
from verimut import Verdict
from verimut.adapters.recording import recorded
from verimut.core.reads import STATE

READ_TASKS = ("frame/theme", "frame/todo", "frame/contact", "frame/call_bob")


def _texts(state: dict) -> set[str]:
    """A helper the verifier calls: what it reads here is still its read."""
    return {todo["text"] for todo in state["todos"]}


def _verdict(task: str, state: dict) -> Verdict:
    if task == "frame/theme":
        return Verdict(state["settings"]["theme"] == "dark", "theme is dark")
    if task == "frame/todo":
        return Verdict("buy milk" in [t for t in sorted(_texts(state))], "buy milk listed")
    if task == "frame/contact":
        return Verdict(state == expected_end(task), "whole state equals the expected end state")
    if task == "frame/call_bob":
        contacts = dict.__getitem__(state, "contacts")  # past the recording view: a read it cannot see
        return Verdict({"id": "bob", "phone": "555-0202"} in contacts, "bob's number updated")
    raise KeyError(task)


class ReadBench(FrameBench):
    name = "readbench"

    def __init__(self) -> None:
        super().__init__(tasks=[t for t in TASKS if t in READ_TASKS])

    def verify(self, episode, run):
        return _verdict(episode["task"], episode["state"])

    def verify_reading(self, episode, run):
        return recorded({STATE: episode["state"]}, lambda views: _verdict(episode["task"], views[STATE]))

    def patch(self, episode, path, value):
        node = episode["state"]
        for seg in path[:-1]:
            node = node[int(seg)] if isinstance(node, list) else node[seg]
        if isinstance(node, list):
            node[int(path[-1])] = value
        else:
            node[path[-1]] = value


benchmark = ReadBench()


class Unrecorded(ReadBench):
    """The same verifiers, with no reads recorded (the capability taken away): an audit as before recording."""

    name = "readbench-unrecorded"
    verify_reading = None  # type: ignore[assignment]


unrecorded = Unrecorded()
