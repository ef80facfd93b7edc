"""Flip tau2 telecom's blind spots outside verimut: tau2's own environment and its evaluator's own assertion check.

    .venv/bin/python precision/read_sets_tau2.py AUDIT_DIR [--seed 42] [--sample 20] [--out F]

AUDIT_DIR is a `verimut audit tau2 --domain telecom` output. Its blind spots are read off `summary.json`'s read map
as plain JSON (per verifier, the collections some scored run wrote that the verifier never read); more than
`--sample` are drawn with `--seed`. For each, the task's reference run (its control cell's actions in
manifest.json) is replayed on tau2's own environment (`registry.get_env_constructor("telecom")`, the task's
`initial_state` applied by `Environment.set_state`, each call through `Environment.get_response` as the user's
when it is a user tool: `tau2bench.Domain.run`), then the task's ENV_ASSERTION checks are run as tau2's evaluator
runs them (`EnvironmentEvaluator.calculate_reward`: `run_env_assertion(a, raise_assertion_error=False)` on each,
the basis passing when all do). On another replay of the same run the blind spot is flipped on the end state's
own pydantic objects, one way per replay: a list or dict emptied, then its records' scalars moved (a bool
negated, an enum set to another member, a number changed, a string appended to; nested models and dict values
included), then the same with the fields that name a record kept (`IDENTITY`: tau2's own lookups go by them); a
model's scalars moved; a None field given a record (its model's defaults, scalars moved). The assertions are run
again: a flip holds when the verdict does not move (an exception, which tau2's evaluator does not catch, is a
moved verdict). `TelecomEnvironment.sync_tools`, which tau2 runs after every assertion function, looks the user's
line and bills up by id in the agent database: that is the read a flip of `db.lines` or `db.bills` finds.
(tau2's full reward replays the calls from the start, so a patched end state never reaches `evaluate_simulation`;
its ENV_ASSERTION basis is this same loop on the end state, which is what is flipped here.) Never imports verimut.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from enum import Enum
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE] + [HERE]
DOMAIN = "telecom"
# Fields that name a record (a line's `line_id`, `phone_number`, a bill's `bill_id`): tau2's tools look records up
# by them, so one flip keeps them and moves only what a write through those tools can change.
IDENTITY = re.compile(r"(^|_)id$|^phone_number$")
# The flips tried on a list or dict, and on a model.
CONTAINER_FLIPS = ("emptied", "records' scalars moved", "records' scalars moved, names kept")
MODEL_FLIPS = ("scalars moved",)
NONE_FLIP = "None given a record"


def _model_of(annotation: Any) -> Any:
    """The pydantic model class inside an `Optional[Model]` annotation."""
    import typing

    from pydantic import BaseModel

    return next(a for a in typing.get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel))


def blind_spots(audit: Path) -> list[tuple[str, str]]:
    """(task, collection) for every blind spot of the audit's read map, in the map's order."""
    verifiers = json.loads((audit / "summary.json").read_text())["read_map"]["verifiers"]
    return [(task, spot["collection"]) for task, v in sorted(verifiers.items()) for spot in v["blind_spots"]]


def assertions(env: Any, task: Any) -> tuple[list[bool], str]:
    """Each ENV_ASSERTION of the task on `env`, as tau2's EnvironmentEvaluator runs them, and the exception that
    stopped them (the evaluator does not catch it either: no reward is computed), or ""."""
    out = []
    for a in task.evaluation_criteria.env_assertions or []:
        try:
            out.append(bool(env.run_env_assertion(a, raise_assertion_error=False)))
        except Exception as e:  # noqa: BLE001 - whatever the check raises, the evaluator raises too
            return out, f"{type(e).__name__}: {e}"
    return out, ""


def _moved(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, Enum):
        return next((m for m in type(value) if m != value), value)
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + " (flipped)"
    return value


def flip_value(value: Any, empty: bool = True, keep: bool = False) -> tuple[Any, int]:
    """`value` flipped, and how many leaves moved: a list or dict emptied (or, `empty` False, each of its records'
    scalars moved), a model's scalars moved; with `keep`, the fields that name a record (`IDENTITY`) are kept."""
    from pydantic import BaseModel

    if isinstance(value, (list, dict)):
        if empty:
            return type(value)(), len(value)
        records = list(value.values()) if isinstance(value, dict) else list(value)
        return value, sum(flip_value(r, False, keep)[1] for r in records if isinstance(r, BaseModel))
    if isinstance(value, BaseModel):
        n = 0
        for name in type(value).model_fields:
            inner = getattr(value, name)
            if isinstance(inner, BaseModel):
                _, k = flip_value(inner, False, keep)
            elif isinstance(inner, dict) and all(isinstance(v, BaseModel) for v in inner.values()):
                k = sum(flip_value(v, False, keep)[1] for v in inner.values())
            elif inner is None or isinstance(inner, (list, dict)) or (keep and IDENTITY.search(name)):
                k = 0  # a model's own containers are left: the collection flipped is the model's scalars
            else:
                object.__setattr__(value, name, _moved(inner))
                k = 1
            n += k
        return value, n
    if value is None:
        return None, 0
    return _moved(value), 1


def flip(env: Any, collection: str, how: str) -> int:
    """Flip `collection` (`db.bills`, `user_db.device.vpn_details`) on env's own databases, in place."""
    first, *path = collection.split(".")
    holder = env.tools.db if first == "db" else env.user_tools.db
    for name in path[:-1]:
        holder = getattr(holder, name)
    if how == NONE_FLIP:  # None given a record: the field's model built from its defaults, its scalars moved
        new, n = flip_value(_model_of(type(holder).model_fields[path[-1]].annotation)(), False)
        object.__setattr__(holder, path[-1], new)
        return n
    new, n = flip_value(getattr(holder, path[-1]), how == "emptied", how.endswith("names kept"))
    object.__setattr__(holder, path[-1], new)
    return n


def getattr_path(env: Any, collection: str) -> Any:
    first, *path = collection.split(".")
    value = env.tools.db if first == "db" else env.user_tools.db
    for name in path:
        value = getattr(value, name)
    return value


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audit", type=Path)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--sample", type=int, default=20)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from loguru import logger
    from tau2bench import Domain

    logger.disable("tau2")
    domain = Domain(DOMAIN)
    cells = {c["cell_id"]: c for c in json.loads((args.audit / "manifest.json").read_text())["cells"]}
    spots = blind_spots(args.audit)
    drawn = spots if len(spots) <= args.sample else random.Random(args.seed).sample(spots, args.sample)
    found = []
    for task_name, collection in sorted(drawn):
        task = domain.tasks[task_name.partition("/")[2]]
        calls = [(a["name"], dict(a["args"])) for a in cells[f"{task_name}:control"]["run"]["actions"]]
        end, _, errors = domain.run(task, calls)
        before, stopped = assertions(end, task)
        passed = all(before) and not stopped
        value = getattr_path(end, collection)
        container = isinstance(value, (list, dict))
        for how in CONTAINER_FLIPS if container else MODEL_FLIPS if value is not None else (NONE_FLIP,):
            flipped, _, _ = domain.run(task, calls)
            n = flip(flipped, collection, how)
            after, raised = assertions(flipped, task)
            now = all(after) and not raised
            check = "nothing to flip" if not n else "held" if now == passed else "moved"
            found.append(
                {
                    "task": task_name,
                    "collection": collection,
                    "flip": how,
                    "leaves_flipped": n,
                    "assertions_reference": before,
                    "assertions_flipped": after,
                    "raised": raised,
                    "passed_reference": passed,
                    "passed_flipped": now,
                    "reference_call_errors": errors,
                    "check": check,
                }
            )
    spot_checks: dict[tuple[str, str], set[str]] = {}
    for f in found:
        spot_checks.setdefault((f["task"], f["collection"]), set()).add(f["check"])
    summary = {
        "held under every flip": sum(c == {"held"} for c in spot_checks.values()),
        "moved under some flip": sum("moved" in c for c in spot_checks.values()),
        "nothing to flip": sum(c == {"nothing to flip"} for c in spot_checks.values()),
    }
    result = {
        "audit": str(args.audit),
        "seed": args.seed,
        "blind_spots": len(spots),
        "drawn": len(drawn),
        "summary": summary,
        "flips": found,
    }
    target = args.out or args.audit / "read-sets-flips.json"
    target.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{len(drawn)} of {len(spots)} blind spots, {len(found)} flips on the reference end: {summary}; {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
