"""A banking audit's (and a banking swap census's) outputs, reduced to what must not change when the code is
reshaped.

`normalize(DIR)` keeps the manifest, every ledger row (its `seconds` dropped: measured time),
summary.json (its `seconds` dropped), summary.md, rewards.json (the fault arm's) and the evidence
blocks of report.html (the output directory's path replaced), so two audits of the same suite compare
equal exactly when the redesign left their behaviour alone. Regenerate the stored copies, only when a
change of behaviour is intended, with:

    python tests/golden.py DIR          # DIR: `verimut audit agentdojo --suite banking --executor inprocess -o DIR`
    python tests/golden.py --swap DIR   # DIR: `verimut swap agentdojo --suite banking --executor inprocess -o DIR`
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "data" / "banking-golden.json"
SWAP_GOLDEN = Path(__file__).parent / "data" / "banking-swap-golden.json"
_CELL = re.compile(r'<details class="cell".*?</details>', re.DOTALL)


def normalize(out: Path) -> dict[str, Any]:
    rows = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines() if line.strip()]
    for row in rows:
        row.pop("seconds", None)
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("seconds", None)
    report = (out / "report.html").read_text()
    kept = {
        "manifest": json.loads((out / "manifest.json").read_text()),
        "ledger": sorted(rows, key=lambda r: r["cell_id"]),
        "summary.json": summary,
        "summary.md": (out / "summary.md").read_text().replace(str(out), "DIR"),
        "report cells": [block.replace(str(out), "DIR") for block in _CELL.findall(report)],
    }
    if (out / "rewards.json").exists():  # the fault arm's; the swap census writes none
        kept["rewards.json"] = json.loads((out / "rewards.json").read_text())
    return kept


if __name__ == "__main__":
    swap = sys.argv[1] == "--swap"
    target = SWAP_GOLDEN if swap else GOLDEN
    target.write_text(json.dumps(normalize(Path(sys.argv[-1])), indent=1, sort_keys=True) + "\n")
    print(f"wrote {target}")
