"""Replay a sample of a BFCL multi-turn audit's findings with bfcl_eval's own executor and checker.

    .venv/bin/python precision/bfcl.py AUDIT_DIR [--seed 26] [--sample 15] [--out FILE.json]

For each sampled false accept and every false reject: the entry's ground-truth calls and the cell's
edited run (from the manifest; `<turn>` markers split it into turns) executed call by call with
bfcl_eval's execute_multi_turn_func_call, from the entry's initial_config; both graded by
multi_turn_checker, unmodified; the state of every backend instance (all attributes, public and private)
diffed at the end of every turn; and every call of the category's ground truths that leaves the state
unchanged (a read, by behaviour) run on a copy of each end state. Never imports verimut.
"""

from __future__ import annotations

import ast
import copy
import importlib.metadata
import importlib.resources
import inspect
import itertools
import json
import os
import re
import sys
from typing import Any

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE] + [HERE]

from precision_common import (
    Audit,
    base_args,
    diff,
    load_audit,
    pick,
    report_findings,
    require,
    trace_difference,
    without_noise,
)

TURN = "<turn>"  # how the manifest marks where a turn begins
_names = itertools.count()


def utils() -> Any:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    return multi_turn_utils


def entries(category: str) -> dict[str, dict[str, Any]]:
    """The category's test entries with their ground truth, read from the package's own data files."""
    data = importlib.resources.files("bfcl_eval") / "data"

    def jsonl(path: Any) -> list[dict[str, Any]]:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    truth = {
        a["id"]: a["ground_truth"] for a in jsonl(data / "possible_answer" / f"BFCL_v4_multi_turn_{category}.json")
    }
    return {q["id"]: {**q, "ground_truth": truth[q["id"]]} for q in jsonl(data / f"BFCL_v4_multi_turn_{category}.json")}


def plain(value: Any, stack: tuple[int, ...] = ()) -> Any:
    """A backend instance as plain data: every attribute; a back-reference to an enclosing object as a marker."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if id(value) in stack:
        return f"<cycle {type(value).__name__}>"
    inner = (*stack, id(value))
    if isinstance(value, dict):
        return {str(k): plain(v, inner) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, inner) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v, inner) for v in value), key=repr)
    if hasattr(value, "__dict__"):
        return {k: plain(v, inner) for k, v in vars(value).items()}
    return repr(value)


class Episode:
    """One entry's backend instances, held in the package's module globals as its executor keeps them."""

    def __init__(self, entry: dict[str, Any], instances: dict[str, Any] | None = None) -> None:
        self.entry = entry
        self.model = f"precision_{os.getpid()}_{next(_names)}"
        self.long_context = "long_context" in entry["id"] or "composite" in entry["id"]
        if instances is not None:  # adopt copies: the executor finds them under this model name
            for name, instance in instances.items():
                vars(utils())[self._global(name)] = copy.deepcopy(instance)
        self.instances = self.call_all([])[1]

    def _global(self, class_name: str) -> str:
        return re.sub(r"[-./:]", "_", f"{self.model}_{self.entry['id']}_{class_name}_instance")

    def call_all(self, calls: list[str]) -> tuple[list[str], dict[str, Any]]:
        e = self.entry
        return utils().execute_multi_turn_func_call(
            calls, e["initial_config"], e["involved_classes"], self.model, e["id"], long_context=self.long_context
        )

    def state(self) -> dict[str, Any]:
        return {name: plain(instance) for name, instance in self.instances.items()}

    def close(self) -> None:
        for name in self.entry["involved_classes"]:
            vars(utils()).pop(self._global(name), None)


def run(entry: dict[str, Any], turns: list[list[str]]) -> tuple[dict[str, Any], list[tuple[int, str]], Episode]:
    """Execute the turns call by call; the state after each turn, the calls that changed it, the episode."""
    episode = Episode(entry)
    states: dict[str, Any] = {}
    writes: list[tuple[int, str]] = []
    for n, calls in enumerate(turns, 1):
        for call in calls:
            before = episode.state()
            episode.call_all([call])
            if episode.state() != before:
                writes.append((n, call))
        states[f"after_turn_{n}"] = episode.state()
    return states, writes, episode


def turns_of(actions: list[dict[str, Any]]) -> list[list[str]]:
    """The manifest's actions as call strings per turn (keyword calls, values as Python literals)."""
    turns: list[list[str]] = []
    for a in actions:
        if a["name"] == TURN:
            turns.append([])
        else:
            turns[-1].append(f"{a['name']}({', '.join(f'{k}={v!r}' for k, v in a['args'].items())})")
    return turns


def parse(call: str, instances: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """`f(1, b=2)` as ("f", {"a": 1, "b": 2}): positional arguments named by the method's own signature."""
    node = ast.parse(call.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return call, {}
    name = node.func.id
    method = next((getattr(i, name) for i in instances.values() if hasattr(i, name)), None)
    params = [p for p in inspect.signature(method).parameters] if method else []
    args = {p: ast.literal_eval(v) for p, v in zip(params, node.args)}
    args.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
    return name, args


def canonical(call: str, instances: dict[str, Any]) -> str:
    name, args = parse(call, instances)
    return f"{name}({json.dumps(args, sort_keys=True, default=str)})"


def check(entry: dict[str, Any], turns: list[list[str]], category: str) -> tuple[bool, str]:
    """multi_turn_checker, unmodified, on the run's calls, each turn's calls as one step."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    if len(turns) != len(entry["ground_truth"]):
        return False, f"{len(turns)} turns, the entry has {len(entry['ground_truth'])}"
    model = f"precision_check_{os.getpid()}_{next(_names)}"
    try:
        result = multi_turn_checker(
            [[calls] if calls else [] for calls in turns],
            entry["ground_truth"],
            copy.deepcopy(entry),
            f"multi_turn_{category}",
            model,
        )
    finally:
        prefix = re.sub(r"[-./:]", "_", model) + "_"
        for key in [k for k in vars(utils()) if k.startswith(prefix)]:
            del vars(utils())[key]
    if result["valid"]:
        return True, "multi_turn_checker: valid"
    return False, f"multi_turn_checker: {result.get('error_type')}: {result.get('error_message')}"


def probe(episode: Episode, call: str) -> tuple[str, bool]:
    """The call's output on a copy of the episode's end state, and whether it changed that copy."""
    twin = Episode(episode.entry, episode.instances)
    try:
        before = twin.state()
        output = twin.call_all([call])[0][0]
        return output, twin.state() != before
    finally:
        twin.close()


def read_calls(all_entries: Any) -> list[str]:
    """The calls of the ground-truth runs that changed nothing where they were made (reads, by behaviour)."""
    calls: set[str] = set()
    writes: set[str] = set()
    for entry in all_entries:
        _, wrote, episode = run(entry, entry["ground_truth"])
        episode.close()
        calls.update(c for turn in entry["ground_truth"] for c in turn)
        writes.update(c for _, c in wrote)
    return sorted(calls - writes)


def replay(
    audit: Audit, entry: dict[str, Any], category: str, pool: list[str], row: dict[str, Any], edit: dict[str, Any]
) -> dict[str, Any]:
    reference, edited = entry["ground_truth"], turns_of(edit["actions"])
    ref_states, ref_writes, ref_ep = run(entry, reference)
    again_states, _, again_ep = run(entry, reference)
    edit_states, edit_writes, edit_ep = run(entry, edited)
    methods = {m for i in ref_ep.instances.values() for m in dir(i) if not m.startswith("_")}
    reads_differ, reads_run = [], 0
    for call in pool:
        if call.split("(")[0] not in methods:
            continue
        (before, wrote_ref), (after, wrote_edit) = probe(ref_ep, call), probe(edit_ep, call)
        if wrote_ref or wrote_edit:
            continue  # a write here, though not where its own entry made it
        reads_run += 1
        if before != after:
            reads_differ.append({"call": call, "reference": before, "edited": after})
    ref_verdict, _ = check(entry, reference, category)
    verdict, detail = check(entry, edited, category)
    noise = diff(ref_states, again_states)
    inst = ref_ep.instances
    for ep in (ref_ep, again_ep, edit_ep):
        ep.close()
    said = [" ".join(m["content"] for m in turn if m.get("role") == "user") for turn in entry["question"]]
    return {
        "cell_id": row["cell_id"],
        "task": row["task"],
        "kind": "user",
        "family": row["family"],
        "outcome": row["outcome"],
        "instruction": "\n".join(f"turn {n}: {s or '(no user message)'}" for n, s in enumerate(said, 1)),
        "edit": (row.get("evidence") or {}).get("edit", ""),
        "verdict_verimut": row.get("verdict"),
        "verdict_replayed": verdict,
        "verifier_detail": detail,
        "reference_verdict": ref_verdict,
        "state_diff": without_noise(diff(ref_states, edit_states), noise),
        "reads_run": reads_run,
        "reads_differ": reads_differ,
        "trace_difference": trace_difference(
            [f"turn {n}: {canonical(c, inst)}" for n, c in ref_writes],
            [f"turn {n}: {canonical(c, inst)}" for n, c in edit_writes],
        ),
        "notes": audit.reference_note(
            row["task"], [a for t in reference for a in [(TURN, {}), *(parse(c, inst) for c in t)]]
        )
        + ([f"{len(noise)} paths differ between two replays of the reference; left out of the diff"] if noise else []),
        "judgement": "",
    }


def main() -> None:
    args = base_args(15).parse_args()
    require("bfcl_eval", "bash scripts/install-bfcl.sh installs it into .venv")
    audit = load_audit(args.audit)
    installed = importlib.metadata.version("bfcl-eval")
    if audit.provenance.get("bfcl-eval") not in (None, installed):
        print(f"warning: the audit ran bfcl-eval {audit.provenance['bfcl-eval']}, this is {installed}", file=sys.stderr)
    picked = pick(audit.rows, args.sample, args.seed)
    findings = []
    by_category: dict[str, dict[str, dict[str, Any]]] = {}
    pools: dict[str, list[str]] = {}
    for row in picked:
        category, _, entry_id = row["task"].partition("/")
        if category not in by_category:
            by_category[category] = entries(category)
            pools[category] = read_calls(by_category[category].values())
        entry = by_category[category][entry_id]
        findings.append(replay(audit, entry, category, pools[category], row, audit.run(row["cell_id"])))
    report_findings(
        args,
        audit,
        findings,
        f"bfcl multi-turn (bfcl-eval {installed})",
        f"bfcl-eval {installed}'s execute_multi_turn_func_call and multi_turn_checker",
    )


if __name__ == "__main__":
    main()
