"""The whole default audit, as the README's first command runs it (slow: scripts/test-slow.sh)."""

from __future__ import annotations

import json

import pytest

from conftest import verimut


@pytest.mark.slow
def test_the_default_agentdojo_audit_end_to_end(tmp_path):
    out = tmp_path / "full"
    result = verimut("audit", "agentdojo", "--out", str(out), "--quiet", timeout=1800)
    assert result.returncode == 1, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["version"] == "v1.2" and summary["scored"] == summary["cells"]
    assert summary["counts_by_kind"]["user"]["control"] == {"control_pass": 97}
    # AgentDojo v1.2 ships 35 injection tasks; workspace's 6-13 have an empty ground truth.
    assert summary["counts_by_kind"]["injection"]["control"] == {"control_pass": 27, "control_fail": 8}
    assert [f["cell_id"] for f in summary["control_failures"]] == [
        f"workspace/injection_task_{n}:control" for n in range(6, 14)
    ]
    assert summary["false_accepts"]
    for fa in summary["false_accepts"]:
        assert fa["differs_from_reference"], fa["cell_id"]
    suites = {fa["task"].split("/")[0] for fa in summary["false_accepts"]}
    assert {"banking", "slack", "workspace"} <= suites


@pytest.mark.slow
def test_the_whole_agentdojo_swap_census(tmp_path):
    out = tmp_path / "swap"
    result = verimut("swap", "agentdojo", "--out", str(out), "--quiet", timeout=1800)
    assert result.returncode in (0, 1), result.stderr
    census = json.loads((out / "summary.json").read_text())
    assert census["scored"] == census["cells"] == 40 * 40 + 20 * 20 + 16 * 16 + 21 * 21
    assert set(census["table"]) == {"workspace", "travel", "banking", "slack"}
    for suite, rows in census["table"].items():
        assert rows["control"]["control_pass"] == rows["control"]["cells"], suite
    assert census["control_failures"] == []
    assert (result.returncode == 1) == any(a["outcome"] == "accepted_effect_absent" for a in census["acceptances"])
