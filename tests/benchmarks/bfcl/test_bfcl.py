"""BFCL multi-turn, for real: bfcl-eval's entries, backend classes and unmodified multi_turn_checker.

The default suite checks the facts the adapter relies on and audits a slice of every category
(about a minute); the whole audit, all four categories, is `slow`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("bfcl_eval", reason="bfcl-eval is not installed: scripts/install-bfcl.sh installs it")

from conftest import verimut
from verimut.adapters import bfcl as adapter
from verimut.core.replay import replay
from verimut.core.run import Action, Run
from verimut.engine import declared
from verimut.oracle import state as oracle

# Two entries of each category: the first, and one from the middle of the file.
SLICE = [f"{c}/multi_turn_{c}_{n}" for c in adapter.CATEGORIES for n in (0, 100)]


@pytest.fixture(scope="module")
def bench() -> adapter.BFCL:
    return adapter.create()


def _cached() -> list[str]:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    return [k for k in vars(multi_turn_utils) if k.endswith("_instance")]


def rows(out: Path) -> dict[str, dict[str, Any]]:
    return {r["cell_id"]: r for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}


# -- the facts found while scoping ---------------------------------------------------------------
def test_all_four_categories_are_read_from_the_data_files_without_the_package_loader(bench):
    ids = bench.tasks()
    assert {t.split("/")[0]: sum(1 for x in ids if x.startswith(t.split("/")[0] + "/")) for t in ids} == {
        c: 200 for c in adapter.CATEGORIES
    }
    # The loader in bfcl_eval.utils takes file locks under the package (constants.eval_config makes the
    # folder on import): neither is imported, and no lock folder exists.
    assert "bfcl_eval.utils" not in sys.modules and "bfcl_eval.constants.eval_config" not in sys.modules
    import bfcl_eval

    assert not (Path(bfcl_eval.__file__).parent / ".file_locks").exists()


def test_every_ground_truth_call_string_parses_with_ast_and_renders_back_to_the_same_call(bench):
    import ast

    for task in bench.tasks():
        entry = bench.entry(task)
        signatures = bench._methods(entry)
        for turn in entry.ground_truth:
            for call in turn:
                action = adapter.parse_call(call, signatures)
                again = adapter.parse_call(adapter.render_call(action), signatures)
                assert again == action
                node = ast.parse(call, mode="eval").body
                assert isinstance(node, ast.Call) and len(action.args) == len(node.args) + len(node.keywords)


def test_instances_are_cached_in_module_globals_by_model_name_and_entry_id_and_we_clear_ours(bench):
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

    entry = bench.entry("base/multi_turn_base_0")
    q = entry.question
    execute_multi_turn_func_call([], q["initial_config"], q["involved_classes"], "probe-model", q["id"])
    assert {f"probe_model_{q['id']}_{c}_instance" for c in q["involved_classes"]} <= set(_cached())
    adapter._drop_globals("probe-model")
    before = set(_cached())
    for task in SLICE[:2]:
        done = replay(bench, task, bench.reference(task, bench.reset(task)))
        assert bench.verify(done.episode, bench.reference(task, bench.reset(task))).passed
    assert set(_cached()) == before  # episodes and verifications leave nothing behind


def test_a_backend_error_is_a_return_value_not_an_exception(bench):
    episode = bench.reset("base/multi_turn_base_0")
    bench.execute(episode, Action(adapter.TURN))
    step = bench.execute(episode, Action("cd", {"folder": "no-such-folder"}))
    assert step.error is None and "error" in step.output.lower()


def test_reads_leave_the_whole_state_alone_and_writes_are_what_the_reference_changes(bench):
    for task in SLICE:
        episode = bench.reset(task)
        for action in bench.reference(task, episode).actions:
            before = bench.snapshot(episode)
            bench.execute(episode, action)
            if action.name != adapter.TURN and not bench.is_write(action):
                assert bench.snapshot(episode)["now"] == before["now"], f"{task}: {action.describe()} changed state"


def test_long_context_instances_share_the_module_data_by_reference_and_episodes_do_not(bench):
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.long_context import CREDIT_CARD_EXTENSION
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

    q = bench.entry("long_context/multi_turn_long_context_150").question
    card = next(iter(CREDIT_CARD_EXTENSION))
    held = []
    for model in ("probe-a", "probe-b"):  # what the checker builds: the model's and the ground truth's instances
        _, instances = execute_multi_turn_func_call(
            [], q["initial_config"], q["involved_classes"], model, q["id"], long_context=True
        )
        held.append(instances["TravelAPI"].credit_card_list[card])
        adapter._drop_globals(model)
    assert held[0] is held[1] is CREDIT_CARD_EXTENSION[card]
    episode = bench.reset("long_context/multi_turn_long_context_150")
    assert episode.instances["TravelAPI"].credit_card_list[card] is not CREDIT_CARD_EXTENSION[card]
    explained = bench.explain("long_context/multi_turn_long_context_150", [f"now.TravelAPI.credit_card_list.{card}"])
    assert explained is not None and "CREDIT_CARD_EXTENSION" in explained


def test_the_checker_compares_public_attributes_only_so_the_current_directory_is_outside_it(bench):
    """A hand-made edit: one more `cd('..')` at the end. The checker passes it; the oracle sees it."""
    task = "base/multi_turn_base_0"
    reference = bench.reference(task, bench.reset(task))
    end = replay(bench, task, reference)
    cwd = end.end["now"]["GorillaFileSystem"]["_private"]["_current_dir"]
    assert cwd.count("/") >= 2, "the entry must end below the top folder for this edit to move"
    edited = reference.replace_actions([*reference.actions, Action("cd", {"folder": ".."})])
    done = replay(bench, task, edited)
    assert bench.verify(done.episode, edited).passed
    differs = oracle.compare(end.end, done.end, bench.telemetry)
    assert [d.collection for d in differs] == ["now.GorillaFileSystem._private"]
    explained = bench.explain(task, [d.collection for d in differs])
    assert explained is not None and "public attributes only" in explained


def test_the_checker_rejects_a_public_change_it_can_see(bench):
    task = "base/multi_turn_base_0"
    reference = bench.reference(task, bench.reset(task))
    edited = reference.replace_actions([*reference.actions, Action("mkdir", {"dir_name": "planted"})])
    done = replay(bench, task, edited)
    verdict = bench.verify(done.episode, edited)
    assert not verdict.passed and "instance_state_mismatch" in verdict.detail


def test_a_run_with_the_wrong_number_of_turns_fails_as_the_runner_would(bench):
    task = "base/multi_turn_base_0"
    reference = bench.reference(task, bench.reset(task))
    short = Run(reference.actions[: [i for i, a in enumerate(reference.actions) if a.name == adapter.TURN][-1]])
    done = replay(bench, task, short)
    assert not bench.verify(done.episode, short).passed


def test_a_login_on_a_session_already_authenticated_changes_nothing_and_is_idle(bench):
    five = bench.reference("base/multi_turn_base_5", bench.reset("base/multi_turn_base_5"))
    [login] = bench.idle_writes("base/multi_turn_base_5")
    assert five.actions[login].name == "authenticate_twitter"
    # 188's reference sets a budget already set (its output, the budget, is the data the user named; and it is its
    # turn's only call) and logs in with a wrong password (a status, beside the turn's other calls): only the login
    ref = bench.reference("base/multi_turn_base_188", bench.reset("base/multi_turn_base_188"))
    assert [ref.actions[i].name for i in bench.idle_writes("base/multi_turn_base_188")] == ["authenticate_twitter"]
    assert bench.idle_writes("base/multi_turn_base_103") == ()  # a stock already watched: the watchlist is data
    assert bench.idle_writes("base/multi_turn_base_0") == ()  # every write of it changes the file system
    omitted = Run(five.actions[:login] + five.actions[login + 1 :])
    done = replay(bench, "base/multi_turn_base_5", omitted)
    assert not oracle.compare(replay(bench, "base/multi_turn_base_5", five).end, done.end, [])
    assert "execution_response_mismatch" in bench.verify(done.episode, omitted).detail  # the login's output


def test_the_parking_brake_force_and_slope_are_telemetry_checked_where_the_checker_compares(bench):
    """base/multi_turn_base_52 starts with the brake engaged (force 0.0, slope 0.0); engaging it again moves only
    the simulator's force and slope (500.0, 10.0), declared telemetry: no difference, and the checker passes. The
    declaration is checked by flipping it on the checker's own instances (`patch`), where a public flip fails."""
    task = "base/multi_turn_base_52"
    reference = bench.reference(task, bench.reset(task))
    end = replay(bench, task, reference)
    assert end.end["now"]["VehicleControlAPI"]["parkingBrakeStatus"] == "engaged"
    engaged = reference.replace_actions([*reference.actions, Action("activateParkingBrake", {"mode": "engage"})])
    done = replay(bench, task, engaged)
    assert done.end["now"]["VehicleControlAPI"]["_private"]["_parkingBrakeForce"] == 500.0
    assert [d.collection for d in oracle.compare(end.end, done.end, [])] == ["now.VehicleControlAPI._private"]
    assert oracle.compare(end.end, done.end, bench.telemetry) == []
    assert bench.verify(done.episode, engaged).passed
    brake = [p for p in bench.telemetry if "VehicleControlAPI" in p]
    checked = declared.graded(bench, task, end.episode, reference, end.end, brake, start=end.start)
    # flipped, and the verdict stayed: tested, not graded (the unflipped end's verdict kept, a pass)
    assert checked == declared.Checked(verdict=bench.verify(end.episode, reference))
    assert checked.verdict is not None and checked.verdict.passed
    public = bench.fork(end.episode)
    bench.patch(public, ("now", "VehicleControlAPI", "parkingBrakeStatus"), "released")
    assert "instance_state_mismatch" in bench.verify(public, reference).detail  # the flip reaches the checker


def test_no_parking_brake_cell_is_a_false_accept_any_more(tmp_path):
    """Before the declaration, extra-oos planted activateParkingBrake on base 52 (63's write) and it was a false
    accept; now what it changes is telemetry, so it changes nothing and is not planted."""
    out = tmp_path / "brake"
    tasks = ("--task", "base/multi_turn_base_52", "--task", "base/multi_turn_base_63")
    result = verimut("audit", "bfcl", *tasks, "-f", "extra-oos", "--out", str(out), "-q", "--executor", "inprocess")
    assert result.returncode == 0, result.stdout + result.stderr
    r = rows(out)
    assert r["base/multi_turn_base_52:control"]["outcome"] == "control_pass"
    assert not [c for c in r if "activateParkingBrake" in c]
    assert json.loads((out / "manifest.json").read_text())["unchecked"] == [  # the brake's two were flipped
        "*.TravelAPI._private._flight_cost_lookup",
        "*.TravelAPI._private._flight_cost_lookup.*",
    ]


# -- the audit, through the command line ---------------------------------------------------------
@pytest.fixture(scope="module")
def sliced(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bfcl") / "audit"
    args = [a for t in SLICE for a in ("--task", t)]
    result = verimut("audit", "bfcl", *args, "--out", str(out), "-q", "--workers", "1")
    assert result.returncode in (0, 1), result.stderr
    return out


def test_the_sliced_audit_passes_every_control_and_scores_every_cell(sliced):
    r = rows(sliced)
    assert {t: r[f"{t}:control"]["outcome"] for t in SLICE} == {t: "control_pass" for t in SLICE}
    assert not [c for c, x in r.items() if x["outcome"] in ("error", "incomplete")]
    summary = json.loads((sliced / "summary.json").read_text())
    assert summary["scored"] == summary["cells"]
    assert "public and private" in summary["provenance"]["state_compared"]


def test_dropping_writes_is_rejected_and_any_false_accept_is_private_state(sliced):
    r = rows(sliced)
    for cell, row in r.items():
        if row["family"] in ("claim-only", "omit") and row["outcome"] == "false_reject":
            # BFCL grades the calls: a dropped write is told apart, unless it changed nothing (idle_writes)
            assert row["evidence"]["differs_from_reference"] == [], cell
        if row["outcome"] == "false_accept":
            assert all("._private" in d["collection"] for d in row["evidence"]["differs_from_reference"]), cell
            assert "public attributes only" in row["reason"], cell


@pytest.mark.slow
def test_the_whole_audit_of_the_four_categories(tmp_path):
    out = tmp_path / "audit"
    result = verimut("audit", "bfcl", "--out", str(out), "-q", timeout=3600)
    assert result.returncode in (0, 1), result.stderr
    r = rows(out)
    assert sum(1 for x in r.values() if x["outcome"] == "control_pass") == 800
    assert not [c for c, x in r.items() if x["outcome"] in ("error", "incomplete", "control_fail")]
    for cell, row in r.items():
        if row["outcome"] == "false_accept":  # a whole-state checker's misses: each explained by the adapter
            assert row["reason"], cell
            assert row["evidence"]["differs_from_reference"], cell


def test_an_unknown_category_is_a_one_line_error(tmp_path):
    result = verimut("audit", "bfcl", "--category", "nope", "--out", str(tmp_path / "x"), "-q")
    assert result.returncode == 2
    assert "unknown suite 'nope' (known: base, long_context, miss_func, miss_param)" in result.stderr
