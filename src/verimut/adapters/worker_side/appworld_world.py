"""AppWorld's side of the AppWorld adapter: runs in AppWorld's own environment (.venv-appworld).

Served to verimut by `verimut/worker.py` (`appworld_world:AppWorldBench`), so this file imports
only the standard library and AppWorld (pydantic 1), never verimut. One AppWorld world can be
live per process (`AppWorld()` closes the others), so every `reset` opens a fresh world and
earlier episodes are finished with.

- Actions are AppWorld API calls, named "app.api", with their arguments.
- The reference run is the task's compiled reference solution, executed once with every API
  call recorded at the requester (the object every `apis.<app>.<api>` call goes through).
- The end state is AppWorld's own per-model changed records (added / updated / removed rows,
  relative to the task's start), read before the evaluator runs.
- The verifier is the task's shipped evaluator, unmodified, with its per-test results.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True  # each task's evaluation.py is imported as module "evaluation"

# API calls that are not state changes: signing in and out, and the completion claim.
_NOT_WRITES = {"login", "logout"}
_CLAIM = ("supervisor", "complete_task")


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v) for v in value]
    return value


class AppWorldBench:
    name = "appworld"
    telemetry = ()

    def __init__(self) -> None:
        root = os.environ.get("APPWORLD_ROOT")
        if not root:
            raise RuntimeError("APPWORLD_ROOT is not set: it names the AppWorld data root to audit")
        import appworld

        appworld.update_root(root)
        self.root = Path(root)
        self.dataset = os.environ.get("VERIMUT_APPWORLD_DATASET", "synthetic")
        self.version = f"appworld {appworld.__version__}, dataset {self.dataset}"
        self._n = 0

    def provenance(self) -> dict[str, str]:
        import appworld

        return {"appworld": appworld.__version__, "dataset": self.dataset, "root": str(self.root)}

    def tasks(self) -> list[str]:
        path = self.root / "data" / "datasets" / f"{self.dataset}.txt"
        return [line.strip() for line in path.read_text().splitlines() if line.strip()]

    def instruction(self, task: str) -> str:
        specs = json.loads((self.root / "data" / "tasks" / task / "specs.json").read_text())
        return str(specs["instruction"])

    # -- an episode ------------------------------------------------------------------------------
    def reset(self, task: str) -> dict[str, Any]:
        from appworld import AppWorld

        AppWorld.close_all()  # worlds are cached by task id: start from the task's own start state
        self._n += 1
        world = AppWorld(task_id=task, experiment_name=f"verimut-{os.getpid()}-{self._n}", ground_truth_mode="full")
        return {"task": task, "world": world, "n": self._n}

    def _world(self, episode: dict[str, Any]) -> Any:
        if episode["n"] != self._n:
            raise RuntimeError("this episode's world was closed by a later reset (one live world per process)")
        return episode["world"]

    def reference(self, task: str, episode: dict[str, Any]) -> dict[str, Any]:
        world = self._world(episode)
        requester = world.requester
        original = requester.request
        calls: list[dict[str, Any]] = []

        def recording(_app_name: str, _api_name: str, **data: Any) -> Any:
            response = original(_app_name, _api_name, **data)
            args = {k: v for k, v in data.items() if k not in ("client", "raise_on_failure", "show", "track")}
            calls.append({"name": f"{_app_name}.{_api_name}", "args": copy.deepcopy(args)})
            return response

        requester.request = recording
        try:
            output = world.execute(world.task.ground_truth.compiled_solution_code + "\nsolution(apis, requester)")
        finally:
            requester.request = original
        if "Execution failed" in output:
            raise RuntimeError(f"the reference solution of {task} failed: {output.strip().splitlines()[-1]}")
        return {"actions": calls, "answer": ""}

    def execute(self, episode: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
        world = self._world(episode)
        app, _, api = action["name"].partition(".")
        code = f"import json\n_r = apis.{app}.{api}(**json.loads({json.dumps(json.dumps(action['args']))}))\nprint(json.dumps(_r, default=str))"
        output = world.execute(code)
        if "Execution failed" in output:
            return {"output": "", "error": output.strip().splitlines()[-1]}
        return {"output": output.strip(), "error": None}

    def is_write(self, action: dict[str, Any]) -> bool:
        from appworld.requester import _get_api_name_to_doc

        app, _, api = action["name"].partition(".")
        if api in _NOT_WRITES or (app, api) == _CLAIM:
            return False
        return str(_get_api_name_to_doc(app, include_private_apis=True)[api]["method"]).lower() != "get"

    def snapshot(self, episode: dict[str, Any]) -> dict[str, Any]:
        """Changed records per model (AppWorld's own diff from the task's start), as plain rows."""
        from appworld.collections.models import ModelCollectionPair

        world = self._world(episode)
        # ModelCollection caches each model's ids and record hashes on first use, and nothing
        # invalidates them when the world changes: clear them, before (so this read is fresh) and
        # after (so the evaluator's own read is too).
        world.models.clear_ids_record_hashes()
        world.task.model_collection.clear_ids_record_hashes()
        pair = ModelCollectionPair(
            start_db_home_path=world.task.model_collection.to_db_home_path,
            start_model_collection=world.task.model_collection,
            end_db_home_path=world.models.to_db_home_path,
            end_model_collection=world.models,
        )
        state: dict[str, Any] = {}
        for model in sorted(pair.changed_model_names()):
            added, updated, removed = pair.changed_records(model)
            state[model] = {
                "added": [_plain(r.dict()) for r in added],
                "updated": [_plain(r.dict()) for r in updated],
                "removed": [_plain(r.dict()) for r in removed],
            }
        world.models.clear_ids_record_hashes()
        return state

    def verify(self, episode: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
        world = self._world(episode)
        tracker = world.evaluate()
        # Keyed by the requirement's text, so a check has the same name in every run of the task.
        checks = {item["requirement"].strip().splitlines()[0][:100]: True for item in tracker.passes}
        checks.update({item["requirement"].strip().splitlines()[0][:100]: False for item in tracker.failures})
        return {
            "passed": bool(tracker.success),
            "detail": f"appworld evaluator: {tracker.pass_count}/{tracker.num_tests} tests pass",
            "checks": checks,
        }
