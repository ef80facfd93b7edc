"""A test benchmark for frame coverage: the same tasks under two verifiers.

Each task appends one record to one collection (`items`, `tags` or `notes`), in two suites.
`own_record` checks only that the requested record is there (examples/todo_bench.py's verifier):
a duplicate write passes it, so its frame coverage is 0.0. `whole_state` compares the whole
state with the start plus the requested record, so it rejects every side effect: coverage 1.0.
"""

from verimut import Action, Run, Step, Verdict

# task -> (collection, record)
TASKS = {
    "todo/add_milk": ("items", "buy milk"),
    "todo/tag_home": ("tags", "home"),
    "notes/add_$5_idea": ("notes", "idea: $5 lunch"),  # a $ in a task id: the figures must show it as text
}
START = {"items": ["water plants"], "tags": ["work"], "notes": []}


class CoverageBench:
    version, telemetry = "1", ()

    def __init__(self, name: str, whole: bool) -> None:
        self.name, self.whole = name, whole

    def provenance(self):
        return {self.name: self.version}

    def tasks(self):
        return list(TASKS)

    def instruction(self, task):
        collection, record = TASKS[task]
        return f"Add {record!r} to my {collection}."

    def reset(self, task):
        return {"task": task, **{k: list(v) for k, v in START.items()}}

    def reference(self, task, episode):
        collection, record = TASKS[task]
        return Run((Action("list", {"of": collection}), Action("add", {"to": collection, "record": record})), "Done.")

    def execute(self, episode, action):
        # A collection that does not exist (wrong-value's synthesized "itemt") is refused, as a real
        # benchmark's tool refuses it: an adapter reports what raised in `Step.error`.
        collection = action.args["to" if action.name == "add" else "of"]
        if collection not in START:
            return Step("", error=f"no collection {collection!r}")
        if action.name == "add":
            episode[collection].append(action.args["record"])
            return Step("ok")
        return Step(", ".join(episode[collection]))

    def is_write(self, action):
        return action.name == "add"

    def snapshot(self, episode):
        return {k: list(episode[k]) for k in START}

    def verify(self, episode, run):
        collection, record = TASKS[episode["task"]]
        if not self.whole:
            return Verdict(record in episode[collection], "record present")
        wanted = {k: list(v) for k, v in START.items()}
        wanted[collection].append(record)
        return Verdict(self.snapshot(episode) == wanted, "whole state as requested")


own_record = CoverageBench("coverage-own", whole=False)
whole_state = CoverageBench("coverage-whole", whole=True)
