"""The aimed out-of-scope search (`verimut audit --aim`, grammar/oos.py `aimed`; docs/read-sets.md), on a plug-in
benchmark (tests/aimbench.py) where two writes of the suite land in the to-do list, a collection `frame/theme`'s
verifier never reads (a blind spot, confirmed by flipping): with `--aim blind-spot` one of them is planted and the
other is reported as proven unchecked by the read map, and the same verifiers are found with fewer cells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, verimut

BENCH = "aimbench:benchmark"
THEME_TODOS = "frame/theme:extra-oos:add_todo@todos"


def _audit(out: Path, *aim: str) -> dict[str, dict[str, Any]]:
    # From tests/, where the plug-in is importable (`python -m` puts the working directory on the path).
    done = verimut(
        "audit", BENCH, "-f", "extra-oos", "-o", str(out), "-q", "--executor", "inprocess", *aim, cwd=ROOT / "tests"
    )
    assert done.returncode in (0, 1), done.stderr
    rows = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines() if line.strip()]
    return {r["cell_id"]: r for r in rows}


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    base = tmp_path_factory.mktemp("aim")
    return _audit(base / "every"), _audit(base / "aimed", "--aim", "blind-spot"), base


def _found(rows: dict[str, dict[str, Any]]) -> set[str]:
    return {r["task"] for r in rows.values() if r["family"] == "extra-oos" and r["outcome"] == "false_accept"}


def test_one_write_into_the_blind_spot_is_planted_and_the_other_reported_as_proven_unchecked(both):
    every, aimed, base = both
    theme = sorted(c for c in every if c.startswith("frame/theme:extra-oos:"))
    assert theme == [
        "frame/theme:extra-oos:add_contact@contacts",
        THEME_TODOS,
        "frame/theme:extra-oos:pin_todo@todos",
    ]
    assert sorted(c for c in aimed if c.startswith("frame/theme:extra-oos:")) == theme[:2]
    assert aimed[THEME_TODOS]["outcome"] == "false_accept"
    assert aimed[THEME_TODOS]["evidence"]["detail"]["proven_unchecked"] == [
        {"collection": "todos", "source_action": 0, "source_task": "frame/pin", "tool": "pin_todo"}
    ]
    edit = aimed[THEME_TODOS]["evidence"]["edit"]
    assert edit.endswith("(aimed: it stands for 1 more proven unchecked by the read map, not planted: pin_todo@todos)")
    summary = (base / "aimed" / "summary.md").read_text()
    assert "| `frame/theme` | `pin_todo@todos` |" in summary  # the read map says what was not planted
    read = json.loads((base / "aimed" / "summary.json").read_text())["read_map"]["verifiers"]["frame/theme"]
    assert read["unplanted"] == ["pin_todo@todos"]
    spots = {b["collection"]: b for b in read["blind_spots"]}
    assert spots["todos"]["writes"] == ["add_todo", "pin_todo"]  # the unplanted write still lands there


def test_the_same_verifiers_are_found_with_fewer_cells(both):
    every, aimed, _ = both
    assert _found(aimed) == _found(every) == {"frame/call_bob", "frame/pin", "frame/theme", "frame/todo"}
    assert len(aimed) < len(every)
    # A write into a collection the verifier reads is kept: frame/pin reads the first to-do, and one appended passes.
    assert aimed["frame/pin:extra-oos:add_todo@todos"]["outcome"] == "false_accept"


def test_a_default_audit_plants_every_write_and_says_nothing_of_an_aim(both):
    every, _, base = both
    assert not any("proven_unchecked" in r["evidence"].get("detail", {}) for r in every.values())
    assert "verimut.aim" not in json.loads((base / "every" / "manifest.json").read_text())["provenance"]
    assert json.loads((base / "aimed" / "manifest.json").read_text())["provenance"]["verimut.aim"] == "blind-spot"
    assert "Aimed search" not in (base / "every" / "summary.md").read_text()


def test_an_adapter_that_does_not_record_reads_plants_every_write_with_a_note(tmp_path: Path):
    args = ("audit", "tests.framebench:benchmark", "-f", "extra-oos", "-q", "--executor", "inprocess")
    plain = verimut(*args, "-o", str(tmp_path / "plain"))
    aimed = verimut(*args, "-o", str(tmp_path / "aimed"), "--aim", "verifier")
    assert "--aim does nothing here: framebench does not record what its verifiers read" in aimed.stderr
    manifests = [json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("plain", "aimed")]
    assert manifests[0]["content_hash"] == manifests[1]["content_hash"]
    assert plain.returncode == aimed.returncode


def test_an_unknown_aim_is_refused_before_any_work(tmp_path: Path):
    done = verimut("audit", "tests.framebench:benchmark", "-o", str(tmp_path / "x"), "--aim", "everywhere")
    assert done.returncode == 2 and "--aim 'everywhere': give one of blind-spot, verifier" in done.stderr
    assert not (tmp_path / "x").exists()


def test_the_api_refuses_an_unknown_aim_before_anything_is_written(tmp_path: Path):
    from verimut import AuditError
    from verimut.api import audit

    with pytest.raises(AuditError, match="aim must be None or one of blind-spot, verifier, not 'all'"):
        audit("tests.framebench:benchmark", tmp_path / "x", aim="all")
    assert not (tmp_path / "x").exists()
