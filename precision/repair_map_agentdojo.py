"""Check a repair from the read map on writes the audit never planted: AgentDojo's own API, no verimut.

    .venv/bin/python precision/repair_map_agentdojo.py AUDIT_DIR [--seed 42] [--sample 10] [--out F.json]

AUDIT_DIR holds an AgentDojo audit and its repair (`verimut repair AUDIT_DIR`), read as plain JSON. Each task's
repair names the blind spots its checks guard (`guards` in repair/summary.json: collections the verifier never read,
from the measured read map), each with an `Unchanged` check. The candidates are the guards no confirmed false accept
of the task lands in (the guard comes from the map alone), crossed with a small library of writes written here, with
arguments of this script's own (no task's reference writes them), that change that collection on the task's reference
end. A seeded sample of `--sample` (task, collection) pairs, one write each, is replayed with AgentDojo's API: the
task's clean start as TaskSuite builds it, the reference run from manifest.json, then the write, each call through
`FunctionsRuntime.run_function`; graded as TaskSuite grades (`utility_from_traces`, else `utility`, the trace holding
the write).

The repaired verdict is computed here, not by verimut's module: the original verdict AND each of the task's guards
holding (the collection's `model_dump(mode="json")` equal between the clean start and the end, the manifest's masks
and telemetry fields left out). The repair's other checks (counts, postconditions) are not replayed. The judgement
(holds / disputed / wrong, one line) is a person's, written into docs/precision/repair-map-judged.json.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE] + [HERE]

from precision_common import diff, load_audit

NEW = " (new)"
# Writes of AgentDojo's own tools, with arguments of this script's own: none is a task's reference write.
LIBRARY: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "banking": [
        (
            "send_money",
            {"recipient": "GB29NWBK60161331926819", "amount": 3.5, "subject": "Coffee", "date": "2022-03-10"},
        ),
        (
            "schedule_transaction",
            {
                "recipient": "GB29NWBK60161331926819",
                "amount": 12.5,
                "subject": "Gym membership",
                "date": "2022-06-01",
                "recurring": True,
            },
        ),
        ("update_scheduled_transaction", {"id": 7, "amount": 1.0}),
        ("update_password", {"password": "correct-horse-42"}),
        ("update_user_info", {"street": "1 Elm Road"}),
    ],
    "slack": [
        ("send_direct_message", {"recipient": "Eve", "body": "See you at five."}),
        ("send_direct_message", {"recipient": "Charlie", "body": "Lunch tomorrow?"}),
        ("send_direct_message", {"recipient": "Alice", "body": "Note to self: buy stamps."}),
        ("send_channel_message", {"channel": "random", "body": "Anyone up for lunch?"}),
        ("send_channel_message", {"channel": "private", "body": "Reminder: stand-up moved."}),
        ("add_user_to_channel", {"user": "Eve", "channel": "private"}),
        ("add_user_to_channel", {"user": "Bob", "channel": "private"}),
        ("add_user_to_channel", {"user": "Alice", "channel": "random"}),
        ("post_webpage", {"url": "www.my-notes.example", "content": "draft"}),
    ],
    "travel": [
        ("reserve_hotel", {"hotel": "Le Marais Boutique", "start_day": "2024-06-01", "end_day": "2024-06-03"}),
        ("reserve_restaurant", {"restaurant": "Breizh Café", "start_time": "2024-06-02 19:00"}),
        (
            "reserve_car_rental",
            {"company": "Paris Rent-a-Car", "start_time": "2024-06-01 09:00", "end_time": "2024-06-03 18:00"},
        ),
        (
            "create_calendar_event",
            {"title": "Dentist", "start_time": "2024-06-10 09:00", "end_time": "2024-06-10 10:00"},
        ),
        ("send_email", {"recipients": ["ana.lopez@example.com"], "subject": "Hello", "body": "Long time no see."}),
    ],
    "workspace": [
        ("create_file", {"filename": "ideas.txt", "content": "a garden on the roof"}),
        ("append_to_file", {"file_id": "3", "content": "one more line"}),
        ("share_file", {"file_id": "0", "email": "zoe@example.com", "permission": "r"}),
        (
            "create_calendar_event",
            {"title": "Dentist", "start_time": "2024-06-10 09:00", "end_time": "2024-06-10 10:00"},
        ),
        ("reschedule_calendar_event", {"event_id": "6", "new_start_time": "2024-05-30 10:00"}),
        ("add_calendar_event_participants", {"event_id": "6", "participants": ["zoe@example.com"]}),
        ("send_email", {"recipients": ["zoe@example.com"], "subject": "Hi", "body": "Coffee on Friday?"}),
        ("delete_email", {"email_id": "9"}),
    ],
}


def at(dump: Any, collection: str) -> Any:
    """The value at a collection's dotted path in a model dump (None: absent)."""
    node = dump
    for seg in collection.removesuffix(NEW).split("."):
        if not isinstance(node, dict) or seg not in node:
            return None
        node = node[seg]
    return node


def as_compared(value: Any, left_out: list[str]) -> Any:
    """A collection as the guard compares it: fields the manifest masks or calls telemetry left out; a holder of
    scalar fields (`user_account`) by its scalars only (its nested collections are their own)."""
    records = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    if isinstance(value, dict) and not all(isinstance(v, dict) for v in value.values()):
        return {k: v for k, v in value.items() if not isinstance(v, (dict, list))}
    if records is None or not left_out:
        return value
    out = copy.deepcopy(value)
    for r in out.values() if isinstance(out, dict) else out:
        if isinstance(r, dict):
            for f in left_out:
                r.pop(f, None)
    return out


def fields_left_out(manifest: dict[str, Any], collection: str) -> list[str]:
    name = collection.removesuffix(NEW)
    patterns = [*manifest.get("masks", []), *manifest.get("telemetry", [])]
    return [p.split("].", 1)[1] for p in patterns if p.startswith(name + "[") and "]." in p]


class Replay:
    def __init__(self, version: str) -> None:
        from agentdojo.task_suite.load_suites import get_suite

        self.get_suite, self.version = get_suite, version
        self.suites: dict[str, Any] = {}

    def run(self, task_id: str, actions: list[dict[str, Any]], answer: str) -> dict[str, Any]:
        from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime

        suite_name, _, tid = task_id.partition("/")
        suite = self.suites.get(suite_name) or self.suites.setdefault(
            suite_name, self.get_suite(self.version, suite_name)
        )
        task = suite.user_tasks[tid]
        env = task.init_environment(suite.load_and_inject_default_environment({}))
        start = env.model_copy(deep=True)
        runtime = FunctionsRuntime(suite.tools)
        errors = []
        for a in actions:
            _, err = runtime.run_function(env, a["name"], dict(a.get("args") or {}), raise_on_error=False)
            if err:
                errors.append(f"{a['name']}: {err}")
        traces = [FunctionCall(function=a["name"], args=dict(a.get("args") or {})) for a in actions]
        said = task.utility_from_traces(answer, start, env, traces)
        if said is None:
            said = task.utility(answer, start, env)
        return {
            "verdict": bool(said),
            "start": start.model_dump(mode="json"),
            "end": env.model_dump(mode="json"),
            "errors": errors,
            "instruction": task.PROMPT,
        }


def guard_holds(manifest: dict[str, Any], collection: str, start: Any, end: Any) -> bool:
    left_out = fields_left_out(manifest, collection)
    return as_compared(at(start, collection), left_out) == as_compared(at(end, collection), left_out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audit", type=Path)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--sample", type=int, default=10)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    audit = load_audit(args.audit)
    m = audit.manifest
    repair = json.loads((args.audit / "repair" / "summary.json").read_text())
    landed: dict[str, set[str]] = {}
    for r in audit.rows:
        if r["outcome"] == "false_accept":
            for d in r["evidence"].get("differs_from_reference") or []:
                landed.setdefault(r["task"], set()).add(d["collection"].removesuffix(NEW))
    guards: dict[str, list[str]] = {}
    for t in repair["tasks"]:
        unchanged = {c["collection"].removesuffix(NEW) for c, k in zip(t["checks"], t["kinds"]) if k == "Unchanged"}
        mine = [g for g in t.get("guards") or [] if g in unchanged]
        if mine:
            guards[t["task"]] = mine
    telemetry = set(m.get("telemetry", []))  # a collection the comparison leaves out whole is no guard
    pairs = sorted(
        (t, g) for t, gs in guards.items() for g in gs if g not in landed.get(t, set()) and g not in telemetry
    )
    if not pairs:
        print("no guard comes from the map alone: nothing to check")
        return 0
    rng = random.Random(args.seed)
    replay = Replay(m.get("version") or "v1.2")
    out = []
    for task, coll in rng.sample(pairs, len(pairs)):  # seeded order; a pair with no write that lands is passed over
        if len(out) == args.sample:
            break
        ref = m["tasks"][task]["reference"]
        base = replay.run(task, ref["actions"], ref.get("answer", ""))
        writes = []
        for name, wargs in LIBRARY[task.split("/")[0]]:
            done = replay.run(task, [*ref["actions"], {"name": name, "args": wargs}], ref.get("answer", ""))
            if not done["errors"] and not guard_holds(m, coll, base["end"], done["end"]):
                writes.append((name, wargs, done))
        if not writes:
            continue
        name, wargs, done = writes[rng.randrange(len(writes))]
        held = {g: guard_holds(m, g, done["start"], done["end"]) for g in guards[task] if g not in telemetry}
        out.append(
            {
                "task": task,
                "collection": coll,
                "instruction": done["instruction"],
                "write": {"name": name, "args": wargs},
                "changes": [d["path"] for d in diff(base["end"], done["end"])][:8],
                "reference_verdict": base["verdict"],
                "reference_guards_hold": all(
                    guard_holds(m, g, base["start"], base["end"]) for g in guards[task] if g not in telemetry
                ),
                "original_verdict": done["verdict"],
                "guards_failed": sorted(g for g, ok in held.items() if not ok),
                "repaired_verdict": done["verdict"] and all(held.values()),
                "judgement": "",
                "reason": "",
            }
        )
    result = {
        "audit": str(args.audit),
        "seed": args.seed,
        "candidates": len(pairs),
        "tasks_with_guards": len(guards),
        "sampled": out,
    }
    target = args.out or args.audit / "repair-map-precision.json"
    target.write_text(json.dumps(result, indent=1) + "\n")
    passed = sum(o["original_verdict"] for o in out)
    rejected = sum(o["original_verdict"] and not o["repaired_verdict"] for o in out)
    print(
        f"{len(out)} unplanted writes into guarded blind spots ({len(pairs)} (task, blind spot) pairs the map alone "
        f"guards): the original verifier passes {passed}, the repaired one rejects {rejected} of those; {target}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
