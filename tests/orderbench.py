"""A test benchmark whose verifier checks an order the task never asks for: a false reject.

`order/add_both` asks for two items on an empty list, in no particular order. Its verifier
checks that the list *equals* ['apples', 'pears'], in that order. The list's order is not part
of what the task asks, so the snapshot (the state the oracle compares) has none: the items
sorted, a multiset with its copies kept (a second 'apples' is still a change). The alternative
run that adds the pears first then ends in the reference's end state, and the verifier fails
it: `alt-order` records a false reject. `order/add_one` has one write: nothing to reorder.
"""

from verimut import Action, Run, Step, Verdict

TASKS = {
    "order/add_both": "Put apples and pears on my shopping list.",
    "order/add_one": "Put milk on my shopping list.",
}
WANTED = {"order/add_both": ["apples", "pears"], "order/add_one": ["milk"]}


class OrderBench:
    name, version, telemetry = "order", "1", ()

    def provenance(self):
        return {"order": self.version}

    def tasks(self):
        return list(TASKS)

    def instruction(self, task):
        return TASKS[task]

    def reset(self, task):
        return {"task": task, "items": []}

    def reference(self, task, episode):
        adds = tuple(Action("add_item", {"text": item}) for item in WANTED[task])
        return Run((Action("list_items"), *adds), answer="Done.")

    def execute(self, episode, action):
        if action.name == "add_item":
            episode["items"].append(action.args["text"])
            return Step("ok")
        return Step(", ".join(episode["items"]) or "(empty)")

    def is_write(self, action):
        return action.name == "add_item"

    def snapshot(self, episode):
        return {"items": sorted(episode["items"])}

    def verify(self, episode, run):
        wanted = WANTED[episode["task"]]
        checks = {
            "every item present": all(i in episode["items"] for i in wanted),
            f"items == {wanted}": episode["items"] == wanted,  # the order: more than the task asks
        }
        return Verdict(all(checks.values()), "shopping list checks", checks)


benchmark = OrderBench()
