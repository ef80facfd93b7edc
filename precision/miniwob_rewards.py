"""Where MiniWoB++'s two reward definitions disagree: one table from two audits of the same tasks and edits, one
through the cube (`verimut audit miniwob`: `Task.evaluate()`, `float(raw_reward > 0)`) and one through miniwob's
own gymnasium environment (`verimut audit miniwob-gym`: `step()`'s return, full reward at raw reward 1.0).

    .venv/bin/python precision/miniwob_rewards.py CUBE_AUDIT GYM_AUDIT [--json OUT]

Cells are matched by id (the same task, seed and edit in both); a cell only one audit has is counted apart. Per
family: cells in both, cells whose verdicts agree, and the disagreements by direction (the cube passes and the gym
does not, or the reverse), with each disagreeing cell's task and edit listed under the table. Plain standard
library: it reads the two ledgers only.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path


def ledger(audit: Path) -> dict[str, dict]:
    return {r["cell_id"]: r for r in map(json.loads, (audit / "cells.jsonl").read_text().splitlines())}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cube", type=Path)
    p.add_argument("gym", type=Path)
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    cube, gym = ledger(a.cube), ledger(a.gym)
    both = [c for c in cube if c in gym and cube[c].get("verdict") is not None and gym[c].get("verdict") is not None]
    table: dict[str, Counter[str]] = defaultdict(Counter)
    differ: list[dict] = []
    for c in both:
        x, y = cube[c], gym[c]
        t = table[x["family"]]
        t["cells"] += 1
        if x["verdict"] == y["verdict"]:
            t["agree"] += 1
            continue
        t["cube passes, gym does not" if x["verdict"] else "gym passes, cube does not"] += 1
        differ.append(
            {
                "cell": c,
                "cube": {"outcome": x["outcome"], "verifier": x["evidence"].get("verifier")},
                "gym": {"outcome": y["outcome"], "verifier": y["evidence"].get("verifier")},
                "edit": x["evidence"].get("edit"),
            }
        )
    cols = ["cells", "agree", "cube passes, gym does not", "gym passes, cube does not"]
    print("| family | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for fam in sorted(table):
        print(f"| {fam} | " + " | ".join(str(table[fam][k]) for k in cols) + " |")
    total = Counter()
    for t in table.values():
        total.update(t)
    print("| **all** | " + " | ".join(f"**{total[k]}**" for k in cols) + " |")
    only = (len(set(cube) - set(gym)), len(set(gym) - set(cube)))
    print(f"\ncells graded in one audit only: {only[0]} (cube), {only[1]} (gym)")
    by_task = Counter(d["cell"].split("/")[0] for d in differ)
    print("disagreeing cells by task: " + ", ".join(f"{t} {n}" for t, n in by_task.most_common()))
    if a.json:
        a.json.write_text(json.dumps({"table": table, "differ": differ}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
