"""Seeded replay, with AgentDojo's own API only, of swap-census controls whose verdict verimut took from its manifest.

Usage: .venv/bin/python precision/swap_controls.py OUT   (OUT: the --out of `verimut swap agentdojo`)
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.remove(str(Path(__file__).resolve().parent))  # precision/agentdojo.py would shadow the package

from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline
from agentdojo.task_suite.load_suites import get_suite

lines = (Path(sys.argv[1]) / "cells.jsonl").read_text().splitlines()
rows = {r["cell_id"]: r for r in map(json.loads, lines)}
# banking's controls never take the manifest's verdict (nothing to flip there), so they are left out
controls = sorted(c for c, r in rows.items() if r["family"] == "control" and not c.startswith("banking/"))
random.seed(44)
sample = random.sample(controls, 12)
holds = 0
for cid in sample:
    row = rows[cid]
    suite_name, task_id = row["task"].split("/")
    suite = get_suite("v1.2", suite_name)
    task = suite.get_user_task_by_id(task_id)
    utility, _ = suite.run_task_with_pipeline(GroundTruthPipeline(task), task, injection_task=None, injections={})
    ok = (utility is True) == (row["outcome"] == "control_pass")
    holds += ok
    print(cid, row["outcome"], "agentdojo utility:", utility, "holds" if ok else "DIFFERS")
print(f"{holds} of {len(sample)} hold")
