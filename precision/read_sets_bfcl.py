"""Check BFCL's measured read sets by another instrument: multi_turn_checker run under `sys.settrace`.

    .venv/bin/python precision/read_sets_bfcl.py AUDIT_DIR CHANGED.json [--seed 42] [--sample 20] [--out F]

CHANGED.json is `bench/bench_read_sets.py reasons`'s output: the false accepts whose reason changed from the
source-text guess (BFCL's `explain`: a private attribute is never compared, anything else is) to the measurement.
A seeded sample of them is replayed with bfcl-eval's own code (the cell's run from manifest.json, graded by the
unmodified `multi_turn_checker`), under a `sys.settrace` tracer. Never imports verimut, and shares nothing with
its recorder (which replaces the backend classes' `__getattribute__`): the tracer watches the checker's own
frames. In `_compare_instances` it reads the locals at each line: after `model_attr = getattr(model_obect,
attr_name)` has run, (the turn, `type(model_obect).__name__`, `attr_name`) was compared, the turn being the
`turn_index` local of the enclosing `multi_turn_checker` frame. A differing collection of the finding
(`after_turn_N.Class...` or `now.Class...`, as the audit names them) counts as read when the checker compared, at
that turn and on that class, the attribute that holds it (`root` for `files` and `directories`; for the class's
own scalar fields, any attribute whose value is a scalar; never a `_private` one unless one was compared). The
judgement (holds / disputed / wrong) is a person's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE] + [HERE]

from bfcl import check, entries, turns_of  # precision/bfcl.py: bfcl-eval's own executor and checker

NEW = " (new)"
SCALARS = (str, int, float, bool, type(None))


def traced(entry: dict[str, Any], turns: list[list[str]], category: str) -> tuple[bool, set[tuple[int, str, str]]]:
    """The checker's verdict, and every (turn index, class, attribute, scalar?) its comparison took."""
    compared: set[tuple[int, str, str, bool]] = set()

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_name != "_compare_instances":
            return tracer if frame.f_code.co_name in ("multi_turn_checker", "state_checker") else None

        def lines(f: Any, ev: str, a: Any) -> Any:
            names = f.f_locals
            if ev == "line" and "model_attr" in names and "attr_name" in names:
                outer = f.f_back
                while outer is not None and outer.f_code.co_name != "multi_turn_checker":
                    outer = outer.f_back
                turn = outer.f_locals.get("turn_index", -1) if outer is not None else -1
                value = names["model_attr"]
                compared.add(
                    (turn, type(names["model_obect"]).__name__, names["attr_name"], isinstance(value, SCALARS))
                )
            return lines

        return lines

    sys.settrace(tracer)
    try:
        passed, _ = check(entry, turns, category)
    finally:
        sys.settrace(None)
    return passed, {(t, c, a) for t, c, a, _ in compared} | {(t, c, "<scalar>") for t, c, _, s in compared if s}


def read_by_trace(collection: str, compared: set[tuple[int, str, str]], turns: int) -> bool:
    parts = collection.removesuffix(NEW).split(".")
    key, cls, rest = parts[0], parts[1], parts[2:]
    turn = turns - 1 if key == "now" else int(key.removeprefix("after_turn_")) - 1
    if not rest:
        return (turn, cls, "<scalar>") in compared
    attr = (
        "root"
        if rest[0] in ("files", "directories")
        else rest[1]
        if rest[0] == "_private" and len(rest) > 1
        else rest[0]
    )
    return (turn, cls, attr) in compared


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audit", type=Path)
    p.add_argument("changed", type=Path)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--sample", type=int, default=20)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    manifest = json.loads((args.audit / "manifest.json").read_text())
    runs = {c["cell_id"]: c.get("run") for c in manifest["cells"]}
    changed = sorted(json.loads(args.changed.read_text())["changed"], key=lambda c: c["cell_id"])
    sample = random.Random(args.seed).sample(changed, min(args.sample, len(changed)))
    out = []
    for c in sorted(sample, key=lambda c: c["cell_id"]):
        task = c["cell_id"].split(":")[0]
        category, entry_id = task.split("/")
        entry = entries(category)[entry_id]
        turns = turns_of(runs[c["cell_id"]]["actions"])
        passed, compared = traced(entry, turns, category)
        per = {}
        for coll, said in c["collections"].items():
            tracer = "read" if read_by_trace(coll, compared, len(entry["ground_truth"])) else "never"
            per[coll] = {**said, "settrace": tracer, "agrees": tracer == said["measured"]}
        out.append({"cell_id": c["cell_id"], "verdict": passed, "collections": per, "judgement": ""})
    agree = sum(all(v["agrees"] for v in f["collections"].values()) for f in out)
    result = {"audit": str(args.audit), "seed": args.seed, "changed": len(changed), "sampled": len(out),
              "settrace_agrees_with_measured": agree, "findings": out}  # fmt: skip
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(
        f"{len(out)} of {len(changed)} changed reasons replayed under sys.settrace; agree with the measurement: {agree}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
