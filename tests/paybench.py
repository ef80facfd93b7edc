"""A payments benchmark with a postcondition gap, modelled on examples/todo_bench.py.

Each task asks for one payment, its id, payee and amount named in the instruction. The verifier
checks only that a payment with the requested id exists, never its payee or amount: a run that
pays 1201 instead of 1200 passes. The note is free text the task does not pin (another wording is
still a correct run), so no repair may check it.
"""

from verimut import Action, Run, Step, Verdict

# task -> (instruction, the reference's pay arguments)
TASKS = {
    "pay/rent": ("Pay 1200 to Ann for the rent, as payment p2.", {"id": "p2", "to": "Ann", "amount": 1200}),
    "pay/gym": ("Pay 45 to Gymco for the gym, as payment p3.", {"id": "p3", "to": "Gymco", "amount": 45}),
}
NOTE = "thanks, see you soon"


class PayBench:
    name, version, telemetry = "pay", "1", ()

    def provenance(self):
        return {"pay": self.version}

    def tasks(self):
        return list(TASKS)

    def instruction(self, task):
        return TASKS[task][0]

    def reset(self, task):
        return {"task": task, "payments": [{"id": "p1", "to": "Bob", "amount": 10, "note": "lunch"}]}

    def reference(self, task, episode):
        pay = Action("pay", {**TASKS[task][1], "note": NOTE})
        return Run((Action("list_payments"), pay), answer="Paid.")

    def execute(self, episode, action):
        if action.name == "pay":
            episode["payments"].append(dict(action.args))
            return Step("ok")
        return Step(repr(episode["payments"]))

    def is_write(self, action):
        return action.name == "pay"

    def snapshot(self, episode):
        return {"payments": [dict(p) for p in episode["payments"]]}

    def verify(self, episode, run):
        wanted = TASKS[episode["task"]][1]["id"]
        return Verdict(any(p["id"] == wanted for p in episode["payments"]), "payment id present")


benchmark = PayBench()
