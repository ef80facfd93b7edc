"""An audit's adapter options are recorded in its manifest and every later command rebuilds the same adapter
(issue 43, item 5), on tests/optbench.py: `create(version, n)` lists n tasks.

0.4 rebuilt it without them: `repair` of a `--option n=4` audit regraded 2 of its 4 tasks and said of the rest
"not regraded: KeyError", exit 0.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import verimut

BENCH = "tests.optbench:create"


def test_repair_rebuilds_the_adapter_with_the_audits_options(tmp_path: Path):
    out = tmp_path / "four"
    done = verimut("audit", BENCH, "-O", "n=4", "-f", "extra", "-o", str(out), "-q", "--executor", "inprocess")
    assert done.returncode == 1, done.stderr  # each task's item written twice passes
    manifest = json.loads((out / "manifest.json").read_text())
    assert json.loads(manifest["provenance"]["verimut.adapter_options"]) == {"n": "4"}
    assert len(manifest["tasks"]) == 4
    repaired = verimut("repair", str(out), "--benchmark", BENCH, "--executor", "inprocess")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "not regraded" not in repaired.stdout + repaired.stderr
    summary = json.loads((out / "repair" / "summary.json").read_text())
    assert (summary["controls"], summary["controls_still_passing"], summary["not_regraded"]) == (4, 4, {})
    assert summary["now_rejected"] == [f"todo/add_{i}:extra" for i in range(4)]


def test_a_resume_with_other_options_is_refused_naming_them(tmp_path: Path):
    out = tmp_path / "resume"
    args = ("audit", BENCH, "-f", "extra", "-o", str(out), "-q", "--executor", "inprocess")
    assert verimut(*args, "-O", "n=3").returncode == 1
    again = verimut(*args, "-O", "n=3", "-O", "extra=1")
    assert again.returncode == 2 and "cannot be called as a factory" in again.stderr, again.stderr
    other = verimut(*args)  # the factory's default, n=2: another adapter
    assert other.returncode == 2, other.stderr
    assert "holds an audit with a different manifest (differs in options, provenance, tasks, cells)" in other.stderr
