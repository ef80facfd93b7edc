"""Behaviour unchanged: a banking audit's and a banking swap census's outputs equal the stored ones (tests/golden.py),
up to measured time."""

from __future__ import annotations

import json

import golden
from conftest import verimut


def test_a_banking_audit_matches_the_stored_outputs(tmp_path):
    out = tmp_path / "banking"
    done = verimut("audit", "agentdojo", "--suite", "banking", "--executor", "inprocess", "-q", "-o", str(out))
    assert done.returncode == 1, done.stderr
    now, stored = golden.normalize(out), json.loads(golden.GOLDEN.read_text())
    for part in stored:
        assert now[part] == stored[part], f"{part} differs from tests/data/banking-golden.json"


def test_a_banking_swap_census_matches_the_stored_outputs(tmp_path):
    """No swap cell's outcome, evidence, summary or report block moves when the census is reshaped for speed."""
    out = tmp_path / "banking-swap"
    done = verimut("swap", "agentdojo", "--suite", "banking", "--executor", "inprocess", "-q", "-o", str(out))
    assert done.returncode == 1, done.stderr
    now, stored = golden.normalize(out), json.loads(golden.SWAP_GOLDEN.read_text())
    assert now.keys() == stored.keys()
    for part in stored:
        assert now[part] == stored[part], f"{part} differs from tests/data/banking-swap-golden.json"
