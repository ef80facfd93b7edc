"""A write that only undoes what the task's own setup broke on purpose is the task's fix, not an out-of-scope side
effect (issue 41 item 5, tau2 telecom: the device starts in airplane mode). The adapter's `pristine` says what the
world was before that setup; `oos.restored` sets such writes aside, and the manifest never plants them."""

from __future__ import annotations

import copy
from typing import Any, ClassVar

from verimut.core.benchmark import Verdict, resolve
from verimut.core.run import Action, Run, Step
from verimut.engine import pipeline
from verimut.engine.manifest import build
from verimut.grammar import oos
from verimut.oracle import state as o

SHIPPED = {"device": {"airplane_mode": False, "wifi": False, "roaming": False}}


class Phone:
    """Two tasks on one device. `phone/wifi` starts in airplane mode (its setup) and asks for wifi; its reference
    turns wifi on and leaves airplane mode as it found it. `phone/airplane` asks for airplane mode off, so the
    suite's library holds that write, and `phone/roam` asks for roaming on."""

    name, version, telemetry = "phone", "1", ()
    SETUP: ClassVar[dict[str, dict[str, bool]]] = {
        "phone/wifi": {"airplane_mode": True},
        "phone/airplane": {},
        "phone/roam": {},
    }
    REFERENCE: ClassVar[dict[str, list[Action]]] = {
        "phone/wifi": [Action("set", {"field": "wifi", "value": True})],
        "phone/airplane": [Action("set", {"field": "airplane_mode", "value": False})],
        "phone/roam": [Action("set", {"field": "roaming", "value": True})],
    }

    def provenance(self) -> dict[str, str]:
        return {}

    def tasks(self) -> list[str]:
        return list(self.SETUP)

    def instruction(self, task: str) -> str:
        return task

    def reset(self, task: str) -> dict[str, Any]:
        state = copy.deepcopy(SHIPPED)
        state["device"].update(self.SETUP[task])
        return state

    def reference(self, task: str, episode: Any) -> Run:
        return Run(tuple(self.REFERENCE[task]))

    def execute(self, episode: Any, action: Action) -> Step:
        episode["device"][action.args["field"]] = action.args["value"]
        return Step("ok")

    def is_write(self, action: Action) -> bool:
        return True

    def snapshot(self, episode: Any) -> Any:
        return copy.deepcopy(episode)

    def verify(self, episode: Any, run: Run) -> Verdict:
        return Verdict(True, "")

    def fork(self, episode: Any) -> Any:
        return copy.deepcopy(episode)


class PristinePhone(Phone):
    name = "pristine-phone"

    def pristine(self, task: str) -> Any:
        return copy.deepcopy(SHIPPED)


def test_restored_sets_aside_only_the_fields_set_back_to_their_pristine_value():
    start = {"device": {"airplane_mode": True, "wifi": False, "roaming": False}}
    undo = o.compare(start, SHIPPED, [])  # airplane_mode: True -> False
    end = {"device": {"airplane_mode": True, "wifi": True, "roaming": False}}
    back = {"device": {"airplane_mode": False, "wifi": True, "roaming": False}}
    assert oos.restored(o.compare(end, back, []), undo) == []
    both = {"device": {"airplane_mode": False, "wifi": True, "roaming": True}}
    [left] = oos.restored(o.compare(end, both, []), undo)
    assert [c.key for c in left.changed] == ["roaming"]
    # A value other than the pristine one is no restoration.
    assert oos.restored(o.compare(back, end, []), undo) == o.compare(back, end, [])


def _planted(bench: Phone) -> list[tuple[str, ...]]:
    m = build(resolve(bench), ["phone/wifi"], pipeline.select_families(["extra-oos"]), lambda _: None)
    planted = {tuple(a.args.values()) for c in m.cells if c.family == "extra-oos" and c.run for a in c.run.actions}
    return sorted(planted - {("wifi", True)})  # less the task's own write


def test_without_pristine_turning_airplane_mode_off_is_planted_as_a_side_effect():
    assert ("airplane_mode", False) in _planted(Phone())


def test_with_pristine_the_setup_s_breakage_undone_is_not_planted_and_other_writes_still_are():
    planted = _planted(PristinePhone())
    assert ("airplane_mode", False) not in planted
    assert ("roaming", True) in planted


class SanctioningPhone(PristinePhone):
    """phone/wifi's instruction, say, accepts any setting the agent asks the user to change."""

    name = "sanctioning-phone"

    def sanctioned(self, task: str) -> list[str]:
        return ["set"] if task == "phone/wifi" else []


def test_a_tool_the_task_s_instruction_sanctions_is_never_planted_on_it():
    assert _planted(SanctioningPhone()) == []
