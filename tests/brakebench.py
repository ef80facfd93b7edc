"""A test benchmark with a telemetry field a call moves: a parking brake's force (after BFCL's vehicle).

`engage_brake` sets the brake 'engaged' and its force to 500.0, also on a brake already engaged. The adapter
declares `car[force]` telemetry: simulator bookkeeping, not world state. `brake/park` (the brake is engaged
at the start; put the car in park) grades the gear and the brake's status; an extra `engage_brake`, borrowed
from `brake/hold`, moves only the force, so with the declaration it changes nothing and is not planted, and
without it (`undeclared`) it is a false accept. `brake/hold` grades the force itself: flipping the declaration
on its reference end changes its verdict, so the force is state for that task (the manifest's `graded`).
"""

import copy

from verimut import Action, Run, Step, Verdict

START = {
    "brake/park": {"gear": "drive", "brake": "engaged", "force": 0.0},
    "brake/hold": {"gear": "park", "brake": "released", "force": 0.0},
}


class BrakeBench:
    name, version = "brake", "1"
    telemetry: tuple[str, ...] = ("car[force]",)

    def provenance(self):
        return {"brake": self.version}

    def tasks(self):
        return list(START)

    def instruction(self, task):
        return "Put the car in park." if task == "brake/park" else "Hold the car with the parking brake."

    def reset(self, task):
        return {"task": task, "car": dict(START[task])}

    def reference(self, task, episode):
        if task == "brake/park":
            return Run((Action("set_gear", {"gear": "park"}),), answer="")
        return Run((Action("engage_brake"),), answer="")

    def execute(self, episode, action):
        car = episode["car"]
        if action.name == "set_gear":
            car["gear"] = action.args["gear"]
        elif action.name == "engage_brake":
            car["brake"], car["force"] = "engaged", 500.0
        return Step(str(car))

    def is_write(self, action):
        return action.name in ("set_gear", "engage_brake")

    def snapshot(self, episode):
        return {"car": dict(episode["car"])}

    def fork(self, episode):
        return copy.deepcopy(episode)

    def patch(self, episode, path, value):
        episode["car"][path[-1]] = value

    def verify(self, episode, run):
        car = episode["car"]
        if episode["task"] == "brake/park":
            ok = car["gear"] == "park" and car["brake"] == "engaged"
        else:
            ok = car["brake"] == "engaged" and car["force"] == 500.0
        return Verdict(ok, "as asked" if ok else f"car: {car}")


class Undeclared(BrakeBench):
    telemetry = ()


benchmark = BrakeBench()
undeclared = Undeclared()
