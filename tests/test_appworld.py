"""AppWorld, for real: the synthetic suite on the real engine and evaluator, audited and repaired through the CLI.

The suite (worker_side/appworld_suite.py) has five generators, three variants each; the verdict
each fault family must get follows from how its evaluation.py checks the end state.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import verimut
from verimut.adapters import appworld as adapter

GENERATORS = ("venmosplit", "spotifyqueue", "venmosend", "phonetext", "noteupdate")
TASKS = [f"{g}_{n}" for g in GENERATORS for n in (1, 2, 3)]
BLIND = ("venmosplit", "spotifyqueue")  # dict_of by receiver / the queue as a set: a duplicate passes
COUNTING = ("venmosend", "phonetext")  # len(added) == N: a duplicate fails


def rows(out: Path) -> dict[str, dict[str, Any]]:
    return {r["cell_id"]: r for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("appworld") / "audit"
    result = verimut("audit", "appworld", "--out", str(out), "-q")
    assert result.returncode == 1, result.stderr  # confirmed false accepts
    return out


@pytest.fixture(scope="module")
def repaired(audit) -> dict[str, Any]:
    result = verimut("repair", str(audit))
    assert result.returncode == 0, result.stderr
    return dict(json.loads((audit / "repair" / "summary.json").read_text()))


def test_every_control_passes_and_the_suite_says_it_is_synthetic(audit):
    r = rows(audit)
    assert {t: r[f"{t}:control"]["outcome"] for t in TASKS} == {t: "control_pass" for t in TASKS}
    assert not [c for c, x in r.items() if x["outcome"] in ("error", "false_reject", "control_fail")]
    summary = json.loads((audit / "summary.json").read_text())
    assert summary["scored"] == summary["cells"]
    assert "SYNTHETIC suite (not AppWorld's own tasks)" in summary["version"]
    assert summary["provenance"]["synthetic"].startswith("yes")


def test_each_generator_gets_the_outcome_its_tests_imply(audit):
    r = rows(audit)
    expected = {}
    for task in TASKS:
        generator = task.split("_")[0]
        if generator in BLIND:
            expected[task] = ("false_accept", "false_accept")
        elif generator in COUNTING:
            expected[task] = ("rejected", "rejected")
        else:  # noteupdate: the one write is an idempotent PATCH
            expected[task] = ("harmless", "refused")
    assert {t: (r[f"{t}:extra"]["outcome"], r[f"{t}:extra-ni"]["outcome"]) for t in TASKS} == expected
    for n in (1, 2, 3):
        assert r[f"noteupdate_{n}:extra-ni"]["reason"] == (
            "the idempotence census marks no write of the reference run non-idempotent"
        )
        assert r[f"noteupdate_{n}:extra"]["evidence"]["differs_from_reference"] == []
    # the only false accepts are the blind generators' duplicates
    fas = {c for c, x in r.items() if x["outcome"] == "false_accept"}
    assert fas == {f"{g}_{n}:{f}" for g in BLIND for n in (1, 2, 3) for f in ("extra", "extra-ni")}
    # dropping writes never passes
    assert all(r[f"{t}:{f}"]["outcome"] == "rejected" for t in TASKS for f in ("claim-only", "omit"))
    summary = json.loads((audit / "summary.json").read_text())
    assert summary["census"]["non_idempotent"] == summary["census"]["writes"] - 3  # the three note updates


def test_the_evidence_shows_the_duplicated_row(audit):
    r = rows(audit)
    diff = {d["collection"]: d for d in r["venmosplit_1:extra"]["evidence"]["differs_from_reference"]}
    assert set(diff) == {"venmo.PaymentRequest.added", "venmo.Notification.added"}
    [request] = diff["venmo.PaymentRequest.added"]["added"]
    assert request["record"]["amount"] == 45.0 and request["record"]["description"] == "work dinner"
    [player] = r["spotifyqueue_1:extra"]["evidence"]["differs_from_reference"]
    assert player["collection"] == "spotify.MusicPlayer.updated"
    assert player["changed"][0]["fields"]["queue_song_ids"] == [[1, 3, 5], [1, 3, 5, 5]]
    assert "### `venmosplit_1:extra`" in (audit / "summary.md").read_text()


def test_the_repair_rejects_the_venmosplit_duplicates_and_no_correct_run(repaired):
    split = {f"venmosplit_{n}:{f}" for n in (1, 2, 3) for f in ("extra", "extra-ni")}
    assert set(repaired["now_rejected"]) == split
    assert repaired["controls"] == repaired["controls_still_passing"] == 15
    assert repaired["harmless"] == repaired["harmless_still_passing"] == 3
    assert repaired["new_false_rejects"] == [] and repaired["regrade_mismatches"] == []
    checks = {t["task"]: t["checks"] for t in repaired["tasks"]}
    assert {"collection": "venmo.PaymentRequest.added", "count": 3} in checks["venmosplit_1"]
    # A queue entry repeated inside the one updated MusicPlayer adds no record: no count catches it.
    unrepaired = {c: why for t in repaired["tasks"] for c, why in t["unrepaired"].items()}
    assert (
        set(unrepaired)
        == set(repaired["still_accepted"])
        == {f"spotifyqueue_{n}:{f}" for n in (1, 2, 3) for f in ("extra", "extra-ni")}
    )
    assert all("postcondition gap" in why for why in unrepaired.values())


def test_generation_is_deterministic(tmp_path):
    roots = [tmp_path / "a", tmp_path / "b"]
    runs = [
        subprocess.Popen([str(adapter.PYTHON), str(adapter.GENERATOR), str(root)], stderr=subprocess.PIPE, text=True)
        for root in roots
    ]
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    files = [{p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()} for root in roots]
    assert files[0].keys() == files[1].keys()
    assert [f for f in files[0] if files[0][f] != files[1][f]] == []
    a = files[0]
    assert a[Path("data/datasets/synthetic.txt")].decode().split() == TASKS
    assert b"SYNTHETIC suite" in a[Path("SYNTHETIC.md")] and b"NOT AppWorld's own task data" in a[Path("SYNTHETIC.md")]
    assert len([f for f in a if f.parts[:2] == ("data", "base_dbs")]) == 12  # every app has a base db
