"""Measured read sets (core/reads.py, adapters/recording.py): the read map, blind spots confirmed by flipping, and
findings' reasons from the measurement, on a plug-in benchmark whose verifiers read known parts of the state
(tests/readbench.py)."""

from __future__ import annotations

import json

import pytest

from readbench import ReadBench
from verimut.api import audit
from verimut.executors.inprocess import InProcess
from verimut.findings import read_map

FAMILIES = ["extra", "omit", "extra-oos"]


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    out = tmp_path_factory.mktemp("reads")
    s = audit(ReadBench(), out, families=FAMILIES, executor=InProcess())
    rows = {json.loads(line)["cell_id"]: json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()}
    assert s.read_map is not None
    return s, rows, out


def test_a_verifier_that_reads_one_field_has_a_map_that_says_so(audited):
    s, rows, _ = audited
    control = rows["frame/theme:control"]["evidence"]["reads"]
    assert control == {"value": ["state.settings.theme"]}
    v = s.read_map.verifiers["frame/theme"]
    assert v.collections["settings"] == read_map.ALWAYS
    assert v.collections["todos"] == v.collections["contacts"] == read_map.NEVER


def test_a_collection_a_verifier_never_reads_is_a_blind_spot_confirmed_by_flipping(audited):
    s, rows, out = audited
    spots = {b.collection: b for b in s.read_map.verifiers["frame/theme"].blind_spots}
    assert set(spots) == {"todos", "contacts"}
    assert {b.check for b in spots.values()} == {read_map.CONFIRMED}
    assert rows["frame/theme:control"]["evidence"]["unread_flipped"] == {"contacts": True, "todos": True}
    assert "add_todo" in spots["todos"].writes  # the benchmark's own write that lands there
    assert "`todos`: add_todo" in (out / "summary.md").read_text()


def test_a_read_through_a_helper_and_a_comprehension_is_still_seen(audited):
    s, rows, _ = audited
    reads = rows["frame/todo:control"]["evidence"]["reads"]
    assert reads["keys"] == ["state.todos"]
    assert reads["value"] == ["state.todos.1.text", "state.todos.2.text"]
    v = s.read_map.verifiers["frame/todo"]
    assert v.collections["todos"] == read_map.ALWAYS
    assert {b.collection for b in v.blind_spots} == {"contacts", "settings"}


def test_a_whole_state_verifier_has_no_blind_spot(audited):
    s, rows, _ = audited
    # An equality with the expected end, key by key: on the control every collection is equal, so each is compared;
    # on an edited run whose to-dos differ the equality stops there (todos come first), so the others only sometimes.
    assert rows["frame/contact:control"]["evidence"]["unread_flipped"] == {}
    v = s.read_map.verifiers["frame/contact"]
    assert v.collections == {"contacts": "sometimes", "settings": "sometimes", "todos": "always"}
    assert v.blind_spots == []


def test_a_read_the_recording_misses_is_caught_by_its_flip(audited):
    # frame/call_bob reads the contacts past the recording view: recorded as unread, but emptying them moves
    # the verdict, so the map calls them read (after all), not a blind spot.
    s, rows, _ = audited
    assert rows["frame/call_bob:control"]["evidence"]["unread_flipped"]["contacts"] is False
    spots = {b.collection: b.check for b in s.read_map.verifiers["frame/call_bob"].blind_spots}
    assert spots["contacts"] == read_map.REFUTED
    assert s.read_map.verifiers["frame/call_bob"].collections["contacts"] == read_map.SOMETIMES


def test_a_false_accepts_reason_comes_from_the_measurement(audited):
    _, rows, _ = audited
    missed = [r for r in rows.values() if r["task"] == "frame/theme" and r["outcome"] == "false_accept"]
    assert missed
    for r in missed:
        touched = [d["collection"] for d in r["evidence"]["differs_from_reference"]]
        assert "measured" in r["reason"] and f"never read {', '.join(touched)}" in r["reason"], r["reason"]
