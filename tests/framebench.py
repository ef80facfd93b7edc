"""A test benchmark for the side-effect families: tasks that write different collections, two verifier styles.

The state is a to-do list (`todos`), a contact book (`contacts`) and a settings record (`settings`).
Each task's reference run writes one or more of them. A task's verifier is one of two styles,
chosen per task with `FrameBench(whole=...)`:

- "own" (the default) checks only the task's own record (the postcondition): it passes a run that
  also changes another collection, so an out-of-scope write is a false accept;
- "whole" compares the whole end state with the one the reference run leaves (postcondition and
  frame condition): it rejects every side effect.

Also here, to exercise the out-of-scope trial: `frame/call_bob` updates a contact only its own start
holds (on every other task's end state the call raises, so the candidate is dropped), and
`frame/keep_light` sets a setting to the value it already has (on most end states it changes
nothing, so the candidate is dropped). `frame/count` only reads.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from verimut import Action, Run, Step, Verdict

SUITE = "frame"


def _todo(text: str) -> Action:
    return Action("add_todo", {"text": text})


def _setting(key: str, value: str) -> Action:
    return Action("set_setting", {"key": key, "value": value})


# task -> (instruction, reference actions, answer)
TASKS: dict[str, tuple[str, tuple[Action, ...], str]] = {
    "frame/todo": ("Add 'buy milk' to my to-do list.", (Action("list_todos"), _todo("buy milk")), "Added."),
    "frame/contact": (
        "Add Bob (555-0101) to my contacts.",
        (Action("add_contact", {"name": "bob", "phone": "555-0101"}),),
        "Added.",
    ),
    "frame/theme": ("Switch to the dark theme.", (_setting("theme", "dark"),), "Done."),
    # Three writes, at positions 0, 2 and 3: two non-idempotent to-dos, one idempotent setting.
    "frame/three": (
        "Add 'pay rent' and 'call mum' to my list, and set the language to French.",
        (_todo("pay rent"), Action("list_todos"), _todo("call mum"), _setting("lang", "fr")),
        "Done.",
    ),
    "frame/call_bob": (
        "Bob's new number is 555-0202: update it.",
        (Action("update_contact", {"name": "bob", "phone": "555-0202"}),),
        "Updated.",
    ),
    "frame/keep_light": ("Make sure the theme is light.", (_setting("theme", "light"),), "It is."),
    "frame/count": ("How many to-dos do I have?", (Action("list_todos"),), "1"),
}

STYLES = ("own", "whole")


def start(task: str) -> dict:
    contacts = [{"id": "alice", "phone": "555-0100"}]
    if task == "frame/call_bob":
        contacts.append({"id": "bob", "phone": "555-0101"})
    return {
        "todos": [{"id": 1, "text": "water plants"}],
        "contacts": contacts,
        "settings": {"theme": "light", "lang": "en"},
    }


def apply(state: dict, action: Action) -> str:
    """Execute one action on a state (raises on a call the app refuses)."""
    if action.name == "add_todo":
        state["todos"].append({"id": len(state["todos"]) + 1, "text": action.args["text"]})
        return "ok"
    if action.name == "add_contact":
        if any(c["id"] == action.args["name"] for c in state["contacts"]):
            raise ValueError(f"contact {action.args['name']!r} exists")
        state["contacts"].append({"id": action.args["name"], "phone": action.args["phone"]})
        return "ok"
    if action.name == "update_contact":
        [contact] = [c for c in state["contacts"] if c["id"] == action.args["name"]] or [None]
        if contact is None:
            raise KeyError(f"no contact {action.args['name']!r}")
        contact["phone"] = action.args["phone"]
        return "ok"
    if action.name == "set_setting":
        state["settings"][action.args["key"]] = action.args["value"]
        return "ok"
    if action.name == "list_todos":
        return ", ".join(t["text"] for t in state["todos"])
    raise ValueError(f"unknown tool {action.name!r}")


def expected_end(task: str) -> dict:
    state = start(task)
    for action in TASKS[task][1]:
        apply(state, action)
    return state


def own_record(task: str, state: dict, answer: str) -> bool:
    """The postcondition only: the task's own records hold the requested values."""
    texts = [t["text"] for t in state["todos"]]
    phones = {c["id"]: c["phone"] for c in state["contacts"]}
    return {
        "frame/todo": lambda: "buy milk" in texts,
        "frame/contact": lambda: phones.get("bob") == "555-0101",
        "frame/theme": lambda: state["settings"]["theme"] == "dark",
        "frame/three": lambda: {"pay rent", "call mum"} <= set(texts) and state["settings"]["lang"] == "fr",
        "frame/call_bob": lambda: phones.get("bob") == "555-0202",
        "frame/keep_light": lambda: state["settings"]["theme"] == "light",
        "frame/count": lambda: answer.strip() == "1",
    }[task]()


class FrameBench:
    name, version, telemetry = "framebench", "1", ()

    def __init__(self, whole: Iterable[str] = (), tasks: Iterable[str] | None = None) -> None:
        self.whole = frozenset(whole)
        self._tasks = list(TASKS) if tasks is None else list(tasks)

    def provenance(self):
        return {"framebench": self.version}

    def tasks(self):
        return list(self._tasks)

    def instruction(self, task):
        return TASKS[task][0]

    def style(self, task: str) -> str:
        return "whole" if task in self.whole else "own"

    def reset(self, task):
        return {"task": task, "state": start(task)}

    def reference(self, task, episode):
        _, actions, answer = TASKS[task]
        return Run(actions, answer=answer)

    def execute(self, episode, action):
        try:
            return Step(apply(episode["state"], action))
        except (KeyError, ValueError) as e:
            return Step("", error=str(e))

    def is_write(self, action):
        return action.name != "list_todos"

    def snapshot(self, episode):
        return copy.deepcopy(episode["state"])

    def fork(self, episode):
        return copy.deepcopy(episode)

    def verify(self, episode, run):
        task, state = episode["task"], episode["state"]
        if self.style(task) == "whole":
            return Verdict(state == expected_end(task), "whole state equals the expected end state")
        return Verdict(own_record(task, state, run.answer), "own record holds the requested values")


class FrameBenchNoFork(FrameBench):
    """The same benchmark without `fork`: the out-of-scope trial replays from reset instead."""

    fork = None


benchmark = FrameBench(whole=("frame/contact",))
