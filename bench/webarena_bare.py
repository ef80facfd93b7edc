"""The bare loop of bench/bench_webarena.py, run in WebArena-Verified's interpreter (.venv-webarena): each cell's
evidence graded by `evaluate_task` with no verimut around it. Reads {"cells": [{"cell": ID, "task": ID,
"requests": [...], "response": {...}}, ...]} on stdin and prints {"seconds": S, "verdicts": {ID: passed}}.

Per cell: the requests as HAR entries (the worker side's own converter, so both loops grade the same evidence)
and one `WebArenaVerified().evaluate_task` call. No episode, no snapshot, no diff, no worker protocol, no ledger.
The package is loaded, and its dataset read, before the timer.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src/verimut/adapters/webarena/worker_side"))

import webarena_evidence as evidence
from webarena_verified.api.webarena_verified import WebArenaVerified
from webarena_verified.types.config import WebArenaVerifiedConfig


def main() -> int:
    logging.disable(logging.CRITICAL)
    cells = json.load(sys.stdin)["cells"]
    wa = WebArenaVerified(
        config=WebArenaVerifiedConfig(environments={k: {"urls": [v]} for k, v in evidence.SITES.items()})
    )
    verdicts: dict[str, bool] = {}
    began = time.perf_counter()
    for cell in cells:
        trace = [evidence.har_entry(r) for r in cell["requests"]]
        result = wa.evaluate_task(
            task_id=int(cell["task"].rsplit("/", 1)[1]), agent_response=cell["response"], network_trace=trace
        )
        verdicts[cell["cell"]] = result.score == 1.0
    print(json.dumps({"seconds": time.perf_counter() - began, "verdicts": verdicts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
