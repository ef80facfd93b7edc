"""A benchmark made by a factory with an option (issue 43, item 5): `create(version, n="2")` lists n to-do tasks,
each verified only for its item's presence (the to-do example's loophole, so `repair` has a finding to close).

Audited with `--option n=4`, it has four tasks; made again without the option, two. A later command that rebuilt
it without the audit's options could not regrade tasks 2 and 3 (0.4: "not regraded: KeyError", exit 0).
"""

from __future__ import annotations

from typing import Any

from verimut import Action, Run, Step, Verdict


class Numbered:
    name, telemetry = "todo-numbered", ()

    def __init__(self, version: str | None, n: int) -> None:
        self.version = version or "1"
        self.items = {f"todo/add_{i}": f"item {i}" for i in range(n)}

    def provenance(self) -> dict[str, str]:
        return {"todo-numbered": self.version}

    def tasks(self) -> list[str]:
        return list(self.items)

    def instruction(self, task: str) -> str:
        return f"Add '{self.items[task]}' to my list."

    def reset(self, task: str) -> dict[str, Any]:
        return {"task": task, "items": ["water plants"]}

    def reference(self, task: str, episode: dict[str, Any]) -> Run:
        return Run((Action("add_item", {"text": self.items[task]}),))

    def execute(self, episode: dict[str, Any], action: Action) -> Step:
        if action.name == "add_item":
            episode["items"].append(action.args["text"])
            return Step("ok")
        return Step(", ".join(episode["items"]))

    def is_write(self, action: Action) -> bool:
        return action.name == "add_item"

    def snapshot(self, episode: dict[str, Any]) -> dict[str, Any]:
        return {"items": list(episode["items"])}

    def verify(self, episode: dict[str, Any], run: Run) -> Verdict:
        return Verdict(self.items[episode["task"]] in episode["items"], "item present")


def create(version: str | None = None, n: str = "2") -> Numbered:
    return Numbered(version, int(n))
