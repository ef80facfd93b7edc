"""Repair from the read map (docs/repair.md#repair-from-the-read-map): where the audit recorded what each verifier
read, the frame checks go on its blind spots and never on a collection it reads; without recorded reads, the checks
come from the reference effect as before. On the plug-in verifiers of tests/readbench.py, through the command line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest

from conftest import ROOT, verimut
from framebench import apply, expected_end, start
from readbench import ReadBench, Unrecorded, _verdict
from verimut.api import audit
from verimut.core.run import Action
from verimut.engine.store import Store
from verimut.executors.inprocess import InProcess
from verimut.repair.checks import Unchanged
from verimut.repair.report import MODULE, load_module
from verimut.repair.synthesis import Guarded, _candidates

FAMILIES = ["extra-oos"]


def _repair(out: Path, benchmark: str) -> dict:
    with pytest.MonkeyPatch.context() as mp:  # the plug-in lives in tests/
        mp.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]))
        done = verimut("repair", str(out), "--benchmark", benchmark, "--executor", "inprocess")
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "repair" / "summary.json").read_text())
    return {"summary": summary, "tasks": {t["task"]: t for t in summary["tasks"]}}


@pytest.fixture(scope="module")
def with_reads(tmp_path_factory):
    out = tmp_path_factory.mktemp("reads")
    audit(ReadBench(), out, families=FAMILIES, executor=InProcess())
    return out, _repair(out, "readbench:benchmark")


@pytest.fixture(scope="module")
def without_reads(tmp_path_factory):
    out = tmp_path_factory.mktemp("noreads")
    audit(Unrecorded(), out, families=FAMILIES, executor=InProcess())
    return out, _repair(out, "readbench:unrecorded")


def test_a_collection_the_verifier_reads_is_not_rechecked_and_its_blind_spots_are(with_reads):
    out, r = with_reads
    todo = r["tasks"]["frame/todo"]  # reads the to-dos' texts; never the contacts or the settings
    assert todo["kinds"] == ["Unchanged", "Unchanged"]
    assert {c["collection"] for c in todo["checks"]} == {"contacts", "settings"}
    assert todo["guards"] == ["contacts", "settings"] and todo["left_to_verifier"] == ["todos"]
    assert r["summary"]["reads_recorded"] is True
    summary = (out / "repair" / "summary.md").read_text()
    assert "## Frame checks from the measured read map" in summary
    assert "leaves `todos` to the verifier, which reads it" in summary
    module = (out / "repair" / MODULE).read_text()
    assert "# from the measured read map: guards the blind spots contacts, settings; leaves todos" in module


def test_a_write_into_a_blind_spot_the_audit_never_planted_is_rejected(with_reads):
    out, _ = with_reads
    repaired = load_module(out / "repair" / MODULE)
    # frame/theme's verifier never reads the contacts; the audit planted add_contact there, never update_contact
    end = expected_end("frame/theme")
    apply(end, Action("update_contact", {"name": "alice", "phone": "555-9999"}))
    assert _verdict("frame/theme", end).passed  # the original verifier passes it
    assert repaired.failures("frame/theme", start("frame/theme"), end) == ["contacts: 1 changed, expected no change"]
    assert repaired.failures("frame/theme", start("frame/theme"), expected_end("frame/theme")) == []


def test_without_recorded_reads_the_checks_are_as_before_and_say_so(without_reads):
    out, r = without_reads
    todo = r["tasks"]["frame/todo"]
    assert todo["guards"] is None and todo["kinds"][0] == "AddedExactly"
    assert todo["checks"][0] == {"collection": "todos", "count": 1}  # the reference count, read or not
    assert r["summary"]["reads_recorded"] is False
    assert "No reads were recorded" in (out / "repair" / "summary.md").read_text()


def test_telemetry_the_comparison_leaves_out_gets_no_guard(with_reads):
    # A guard on a collection the checks' diff drops whole could never fail: declared telemetry gets none.
    out, _ = with_reads
    m = Store(out).read_manifest()
    guard = Guarded(blind=["contacts", "todos"], read=["settings"], unguarded=[])
    assert _candidates(m, "frame/theme", [], {}, guard) == [Unchanged("contacts"), Unchanged("todos")]
    told = msgspec.structs.replace(m, telemetry=["todos"])
    assert _candidates(told, "frame/theme", [], {}, guard) == [Unchanged("contacts")]
