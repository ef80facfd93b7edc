"""Behaviour unchanged: a banking audit's outputs equal the stored ones (tests/golden.py), up to measured time."""

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
