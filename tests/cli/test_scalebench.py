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
from verimut.outputs.report_html import PAGE

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
    given = {"tasks": "8", "records": "30", "verify_ms": "0.2", "seed": "0"}
    # the benchmark's own provenance, and the options the audit made its adapter with (issue 43, item 5)
    options = json.loads(manifest["provenance"].pop("verimut.adapter_options"))
    assert manifest["provenance"] == {"scalebench": "1", **given} and options == given
    if command == "swap":
        assert len(cells) == 8 * 8


def test_a_bad_option_is_a_one_line_error(tmp_path):
    result = verimut("audit", "bench.scalebench:create", "--option", "tasks=many", "--out", str(tmp_path / "o"))
    assert result.returncode == 2
    assert "scalebench: --option tasks=many is not a whole number" in result.stderr


def test_the_report_of_100_tasks_is_bounded_and_keeps_every_finding(tmp_path):
    """Past `figures.TOP` tasks report.html's figures draw the top ones (bounded PNGs), its per-task table folds
    the rest, and every confirmed false accept keeps its evidence block (past the first page, on a finding page) and its link."""
    import base64
    import re
    import struct

    out = tmp_path / "audit"
    options = ["--option", "tasks=100", "--option", "records=30", "--option", "verify_ms=0", "--option", "seed=0"]
    result = verimut("audit", "bench.scalebench:create", *options, "--out", str(out), "-q", "--workers", "2")
    assert result.returncode == 1, result.stderr
    page = (out / "report.html").read_text()
    for uri in re.findall(r'src="data:image/png;base64,([^"]+)"', page):
        assert struct.unpack(">II", base64.b64decode(uri)[16:24])[1] <= 1800  # height in pixels
    findings = [f["cell_id"] for f in json.loads((out / "summary.json").read_text())["false_accepts"]]
    tasks = {cid.split(":")[0] for cid in findings}
    assert len(tasks) > 40
    assert f"{len(tasks)} tasks have a confirmed false accept" in page
    assert f"The other {len(tasks) - 40} tasks with a confirmed false accept" in page
    assert "verifiers with the most false accepts, of 100 with a confirmed side effect" in page
    pages = "".join(f.read_text() for f in sorted((out / "report").glob("findings-*.html")))
    assert bool(pages) == (len(findings) > PAGE)
    for cid in findings:  # each finding: its evidence block, on report.html or a finding page, and a link to it
        block = f'<details class="cell" id="cell-{cid}">'
        if block in page:
            assert f'href="#cell-{cid}"' in page
        else:
            assert block in pages and re.search(rf'href="report/findings-\d{{4}}\.html#cell-{re.escape(cid)}"', page)
