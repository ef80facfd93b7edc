"""TRL's own reward functions, audited as a trainer hands them over (`reward:trl.rewards:accuracy_reward`).

Optional: the extra `trl` (TRL and math-verify) pulls in torch, so scripts/test.sh does not install it; these tests
skip without it (`bash scripts/install-trl.sh`, then `.venv-trl/bin/python -m pytest tests/benchmarks/trl`)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl", reason="TRL is not installed (the optional extra `trl`; it pulls in torch)")
pytest.importorskip("math_verify", reason="math-verify is not installed (the optional extra `trl`)")

from conftest import verimut

ROWS = [
    {
        "prompt": [{"role": "user", "content": "What is 1/3 + 0? Put the answer in \\boxed{}."}],
        "solution": "\\frac{1}{3}",
    },
    {"prompt": [{"role": "user", "content": "What is 3 + 4? Put the answer in \\boxed{}."}], "solution": "7"},
    {"prompt": [{"role": "user", "content": "What is 10 * 2? Put the answer in \\boxed{}."}], "solution": "20"},
]


def test_trl_accuracy_reward(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    out = tmp_path / "out"
    result = verimut(
        "audit", "reward:trl.rewards:accuracy_reward", "--dataset", str(data), "-o", str(out), "-q",
        "--executor", "inprocess", "--fail-on", "never",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    controls = [r for r in rows if r["family"] == "control"]
    assert len(controls) == 3 and all(r["outcome"] == "control_pass" for r in controls), controls
    summary = json.loads((out / "summary.json").read_text())
    assert "accuracy_reward" in summary["reward_numbers"]
