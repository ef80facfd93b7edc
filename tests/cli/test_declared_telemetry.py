"""Declared telemetry a call moves (tests/brakebench.py), as BFCL's parking-brake force and slope are.

A write that moves only declared telemetry changes nothing: the out-of-scope search does not plant it, so a
verifier that ignores the field has no false accept from it. The declaration is checked by flipping: the task
whose verifier grades the field gets it back as state (the manifest names it).
"""

from __future__ import annotations

import json

from conftest import verimut


def _audit(tmp_path, target: str) -> tuple[int, dict[str, dict], dict]:
    out = tmp_path / target.split(":")[1]
    r = verimut("audit", target, "--out", str(out), "--executor", "inprocess", "-q")
    rows = {x["cell_id"]: x for x in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}
    return r.returncode, rows, json.loads((out / "manifest.json").read_text())


def test_a_write_that_moves_only_declared_telemetry_is_no_false_accept(tmp_path):
    code, rows, manifest = _audit(tmp_path, "tests.brakebench:benchmark")
    assert code == 0  # no confirmed false accept
    oos = rows["brake/park:extra-oos"]  # engage_brake, tried, changes nothing there
    assert oos["outcome"] == "refused" and "(1 tried)" in oos["reason"]
    assert manifest["graded"] == {"car[force]": ["brake/hold"]}  # flipped: brake/hold grades the force
    assert manifest["unchecked"] == []
    assert rows["brake/hold:claim-only"]["outcome"] == "rejected"


def test_without_the_declaration_the_same_write_is_a_false_accept(tmp_path):
    code, rows, _ = _audit(tmp_path, "tests.brakebench:undeclared")
    assert code == 1
    [cell] = [x for c, x in rows.items() if c.startswith("brake/park:extra-oos:engage_brake")]
    assert cell["outcome"] == "false_accept"
    assert [d["collection"] for d in cell["evidence"]["differs_from_reference"]] == ["car"]
