"""Re-score a seeded sample of an audit of TRL's own reward functions with TRL itself. Never imports verimut.

    .venv-trl/bin/python precision/trl_rewards.py AUDIT_DIR [--sample 20] [--seed 40] [--out FILE.json]

AUDIT_DIR is `verimut audit reward:trl.rewards:FUNC --dataset D -o AUDIT_DIR` (scripts/install-trl.sh makes
.venv-trl). For each sampled finding (false accepts and false rejects, drawn round-robin over the families with
`random.Random(seed)`), the dataset row is read again from the file the manifest's provenance names, and the
edited completion is handed to the function the way GRPOTrainer hands it over: keyword arguments, lists of one,
the completion as a message list, every dataset column under its own name. Prints each finding with the reward
TRL's function gives the reference answer's completion and the edited one; writes JSON with an empty judgement
per finding (the judgement is a person's: precision/README.md).
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

KNOWN = ("false_accept", "false_reject")


def grade(func: Any, row: dict[str, Any], text: str) -> Any:
    columns = {k: [v] for k, v in row.items() if k != "prompt"}
    return func(prompts=[row["prompt"]], completions=[[{"role": "assistant", "content": text}]], **columns)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audit", type=Path)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    manifest = json.loads((args.audit / "manifest.json").read_text())
    rows = [json.loads(line) for line in (args.audit / "cells.jsonl").read_text().splitlines() if line.strip()]
    cells = {c["cell_id"]: c for c in manifest["cells"]}
    provenance = manifest["provenance"]
    module, name = provenance["reward"].split(":")
    func = getattr(importlib.import_module(module), name)
    data = [json.loads(line) for line in Path(provenance["dataset"]).read_text().splitlines() if line.strip()]

    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["outcome"] in KNOWN:
            by_family[r["family"]].append(r)
    rng = random.Random(args.seed)
    for family in by_family.values():
        rng.shuffle(family)
    drawn: list[dict[str, Any]] = []
    while len(drawn) < args.sample and any(by_family.values()):
        for family in sorted(by_family):
            if by_family[family] and len(drawn) < args.sample:
                drawn.append(by_family[family].pop())

    found = []
    for r in drawn:
        index = int(r["task"].rsplit("/", 1)[1])
        row = data[index]
        reference = next(c for c in manifest["cells"] if c["task"] == r["task"] and c["family"] == "control")
        answer = cells[r["cell_id"]]["run"]["answer"]
        entry = {
            "cell": r["cell_id"], "outcome": r["outcome"], "prompt": row["prompt"][-1]["content"],
            "reference_answer": row["solution"], "reference_completion": reference["run"]["answer"],
            "edited_completion": answer, "reward_reference": grade(func, row, reference["run"]["answer"]),
            "reward_edited": grade(func, row, answer), "judgement": "", "reason": "",
        }  # fmt: skip
        found.append(entry)
        print(f"{entry['cell']}  {entry['outcome']}  reference {entry['reward_reference']}  edited "
              f"{entry['reward_edited']}\n    {answer!r}\n    reference answer {row['solution']!r}")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(found, indent=1) + "\n")


if __name__ == "__main__":
    main()
