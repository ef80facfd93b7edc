"""A whole benchmark in 49 lines, to show the adapter interface: a to-do list app.

Each task asks for one item to be added. Its verifier checks that the item is there,
and not how many times: `verimut audit examples.todo_bench:benchmark` finds that.
"""

from verimut import Action, Run, Step, Verdict

TASKS = {"todo/add_milk": "Add 'buy milk' to my list.", "todo/add_call": "Add 'call mum' to my list."}


class TodoBench:
    name, version, telemetry = "todo", "1", ()

    def provenance(self):
        return {"todo": self.version}

    def tasks(self):
        return list(TASKS)

    def instruction(self, task):
        return TASKS[task]

    def reset(self, task):
        return {"task": task, "items": ["water plants"]}

    def reference(self, task, episode):
        item = TASKS[task].split("'")[1]
        return Run((Action("list_items"), Action("add_item", {"text": item})), answer="Done.")

    def execute(self, episode, action):
        if action.name == "add_item":
            episode["items"].append(action.args["text"])
            return Step("ok")
        return Step(", ".join(episode["items"]))

    def is_write(self, action):
        return action.name == "add_item"

    def snapshot(self, episode):
        return {"items": list(episode["items"])}

    def verify(self, episode, run):
        wanted = TASKS[episode["task"]].split("'")[1]
        return Verdict(wanted in episode["items"], "item present")


benchmark = TodoBench()
