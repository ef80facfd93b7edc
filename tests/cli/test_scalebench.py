"""The scaling benchmark's generated plug-in (bench/scalebench.py) through the real command line, at a small size.

bench/bench_scaling.py runs it at N = 100 to 10,000; here N = 8 is enough to see that the audit and the swap census
score every manifest cell exactly once, and that the generated verifiers both reject and falsely accept.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import verimut

OPTIONS = ["--option", "tasks=8", "--option", "records=30", "--option", "verify_ms=0.2", "--option", "seed=0"]


def ledger_and_manifest(out: Path) -> tuple[list[dict], list[str]]:
    rows = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines() if line.strip()]
    cells = [c["cell_id"] for c in json.loads((out / "manifest.json").read_text())["cells"]]
    return rows, cells


@pytest.mark.parametrize(("command", "false_accept"), [("audit", "false_accept"), ("swap", "accepted_effect_absent")])
def test_every_cell_once_with_rejections_and_false_accepts(tmp_path, command, false_accept):
    out = tmp_path / command
    result = verimut(command, "bench.scalebench:create", *OPTIONS, "--out", str(out), "-q", "--workers", "2")
    assert result.returncode == 1, result.stderr  # confirmed false accepts: exit 1
    rows, cells = ledger_and_manifest(out)
    assert len(cells) == len(set(cells))
    assert sorted(r["cell_id"] for r in rows) == sorted(cells)  # every manifest cell, once
    outcomes = Counter(r["outcome"] for r in rows)
    assert outcomes["control_pass"] == 8 and not outcomes["control_fail"] and not outcomes["error"]
    assert outcomes["rejected"] and outcomes[false_accept], outcomes
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["provenance"] == {"scalebench": "1", "tasks": "8", "records": "30", "verify_ms": "0.2", "seed": "0"}
    if command == "swap":
        assert len(cells) == 8 * 8


def test_a_bad_option_is_a_one_line_error(tmp_path):
    result = verimut("audit", "bench.scalebench:create", "--option", "tasks=many", "--out", str(tmp_path / "o"))
    assert result.returncode == 2
    assert "scalebench: --option tasks=many is not a whole number" in result.stderr
