"""BFCL's checker under the read recording (BFCL.verify_reading), against the real package.

`multi_turn_checker` re-executes the run's calls on instances of its own and compares their public attributes
after each turn whose ground truth makes a call; the recording notes the attributes its comparison takes off the
run's instances (by turn, as the snapshot names them) and the call outputs its response check takes.
"""

from __future__ import annotations

import pytest

pytest.importorskip("bfcl_eval", reason="bfcl-eval is not installed: scripts/install-bfcl.sh installs it")

from verimut.adapters import bfcl as adapter
from verimut.core.reads import STATE, TRACE, reads_collection
from verimut.core.replay import replay
from verimut.core.run import Action
from verimut.engine import blind_spots
from verimut.oracle import state as oracle


@pytest.fixture(scope="module")
def bench() -> adapter.BFCL:
    return adapter.create()


def _classes() -> list[type]:
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import gorilla_file_system, posting_api, travel_booking

    return [gorilla_file_system.GorillaFileSystem, gorilla_file_system.Directory, posting_api.TwitterAPI,
            travel_booking.TravelAPI]  # fmt: skip


def test_recording_leaves_every_verdict_as_it_was(bench):
    # The base category's references, and each with one more write at its end (mostly failed): the recorded call
    # and the plain one agree, and no class is left hooked.
    moved = []
    for task in [t for t in bench.tasks() if t.startswith("base/")]:
        run = bench.reference(task, bench.reset(task))
        extra = run.replace_actions([*run.actions, Action("mkdir", {"dir_name": "planted"})])
        for r in (run, extra):
            done = replay(bench, task, r)
            plain = bench.verify(bench.fork(done.episode), r)
            recorded, _ = bench.verify_reading(done.episode, r)
            if recorded != plain:
                moved.append((task, len(r.actions)))
    assert moved == []
    assert [c for c in _classes() if "__getattribute__" in c.__dict__] == []


def test_the_checker_reads_public_attributes_at_each_compared_turn_and_never_a_private_one(bench):
    task = "base/multi_turn_base_52"
    run = bench.reference(task, bench.reset(task))
    done = replay(bench, task, run)
    _, reads = bench.verify_reading(done.episode, run)
    state, known = reads.under(STATE), list(oracle.collections(done.end))
    assert reads_collection(state, "now.VehicleControlAPI", known)
    assert reads_collection(state, "after_turn_1.TwitterAPI.tweets", known)
    assert "state.now.VehicleControlAPI.parkingBrakeStatus" in reads.value
    assert not reads_collection(state, "now.VehicleControlAPI._private", known)
    # the private collections are blind spots, confirmed by flipping them where the checker compares
    flipped = blind_spots.flip_unread(bench, done.episode, run, done.end, reads, True)
    assert flipped == dict.fromkeys(blind_spots.unread(done.end, reads), True) and flipped


def test_a_turn_whose_ground_truth_makes_no_call_is_never_read(bench):
    # base 167's last turn asks for nothing the ground truth does: the checker compares no state there, so the end
    # state ('now') is never read; the turn before it is (the two extra-oos false accepts land in that last turn).
    task = "base/multi_turn_base_167"
    run = bench.reference(task, bench.reset(task))
    done = replay(bench, task, run)
    _, reads = bench.verify_reading(done.episode, run)
    state, known = reads.under(STATE), list(oracle.collections(done.end))
    assert not reads_collection(state, "now.TravelAPI", known)
    assert reads_collection(state, "after_turn_4.TravelAPI", known)
    # the response check copies every output so far: each call's position in the run, the turn markers skipped
    calls = [str(i) for i, a in enumerate(run.actions) if a.name != adapter.TURN]
    assert sorted({p.split(".")[1] for p in reads.whole if p.startswith(TRACE + ".")}, key=int) == calls


def test_the_file_tree_is_read_through_its_own_equality(bench):
    # Directory and File define __eq__; they run as written (a changed file fails, recorded or not), and the tree
    # reads as the snapshot's files and directories.
    task = "base/multi_turn_base_0"
    run = bench.reference(task, bench.reset(task))
    done = replay(bench, task, run)
    _, reads = bench.verify_reading(done.episode, run)
    assert {"state.now.GorillaFileSystem.files", "state.now.GorillaFileSystem.directories"} <= set(reads.whole)
    assert "state.now.GorillaFileSystem._private._current_dir" not in reads.value
    edited = run.replace_actions([*run.actions, Action("touch", {"file_name": "planted.txt"})])
    changed = replay(bench, task, edited)
    verdict, _ = bench.verify_reading(changed.episode, edited)
    assert not verdict.passed and "instance_state_mismatch" in verdict.detail


def test_a_read_map_covers_only_the_entrys_own_classes(tmp_path):
    # Entries 52 (vehicle, Twitter) and 63 (vehicle, messages): each one's map and blind spots hold only the classes
    # it involves (provenance own_states), and 52's private vehicle numbers are confirmed blind spots.
    import json

    from conftest import verimut

    out = tmp_path / "map"
    tasks = ("--task", "base/multi_turn_base_52", "--task", "base/multi_turn_base_63")
    result = verimut("audit", "bfcl", *tasks, "-f", "extra-oos", "--out", str(out), "-q", "--executor", "inprocess")
    assert result.returncode == 0, result.stdout + result.stderr
    verifiers = json.loads((out / "summary.json").read_text())["read_map"]["verifiers"]
    classes = {t: {c.split(".")[1] for c in v["collections"]} for t, v in verifiers.items()}
    assert classes["base/multi_turn_base_52"] == {"TwitterAPI", "VehicleControlAPI"}
    assert "TwitterAPI" not in classes["base/multi_turn_base_63"]
    spots = {b["collection"]: b["check"] for b in verifiers["base/multi_turn_base_52"]["blind_spots"]}
    assert spots.get("now.VehicleControlAPI._private") == "confirmed"


def test_a_flip_in_a_turn_the_checker_skips_is_seen_at_the_next_compared_turn(bench):
    # miss_func 0's third turn withholds a function (its ground truth makes no call): the checker compares no state
    # after it, so nothing of after_turn_3 is read. A value set there stays for turn 4, as a write made then would,
    # and the checker sees it there: that turn is no blind spot. Only a skipped last turn ('now', base 167) is one.
    task = "miss_func/multi_turn_miss_func_0"
    run = bench.reference(task, bench.reset(task))
    done = replay(bench, task, run)
    _, reads = bench.verify_reading(done.episode, run)
    known = list(oracle.collections(done.end))
    assert not reads_collection(reads.under(STATE), "after_turn_3.TwitterAPI", known)
    flipped = bench.fork(done.episode)
    bench.patch(flipped, ("after_turn_3", "TwitterAPI", "tweet_counter"), 99)
    assert "instance_state_mismatch" in bench.verify(flipped, run).detail
