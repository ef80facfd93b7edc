"""Repair closes a postcondition gap: a verifier that never checks a pinned value gets `Carries`, and no
correct run (control, alternative run) is rejected. Also the swap census's effect-absent acceptances (--swap).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

import paybench
import verimut.repair as repair  # noqa: PLR0402  (the package; `verimut.repair` the attribute is the API function)
from conftest import verimut
from verimut.core.errors import AuditError
from verimut.core.replay import replay
from verimut.engine.store import Store

BENCH = "tests.paybench:benchmark"


@pytest.fixture(scope="module")
def paid(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pay") / "audit"
    assert verimut("audit", BENCH, "--out", str(out), "-q").returncode == 1  # its false accepts
    result = verimut("repair", str(out), "--benchmark", BENCH)
    assert result.returncode == 0, result.stderr
    return out


def test_a_value_only_gap_gets_a_postcondition_and_the_alternatives_still_pass(paid):
    r = json.loads((paid / "repair" / "summary.json").read_text())
    ledger = {x["cell_id"]: x for x in map(json.loads, (paid / "cells.jsonl").read_text().splitlines())}
    wrong = {c for c, x in ledger.items() if x["family"] == "wrong-value" and x["outcome"] == "false_accept"}
    assert wrong == {f"pay/{t}:wrong-value:1.{a}" for t in ("rent", "gym") for a in ("to", "amount")}
    assert wrong <= set(r["now_rejected"]) and r["still_accepted"] == []
    by_task = {t["task"]: t for t in r["tasks"]}
    rent = by_task["pay/rent"]
    assert rent["checks"] == [
        {"collection": "payments", "count": 1},
        {"collection": "payments", "field": "to", "value": "Ann", "key": None, "times": 1},
        {"collection": "payments", "field": "amount", "value": 1200, "key": None, "times": 1},
    ]
    assert rent["caught"]["pay/rent:wrong-value:1.amount"] == ["payments (added).amount: wrote 10, expected 1200"]
    assert rent["pinned_by"] == {
        "Carries('payments', 'to', 'Ann')": "instruction",
        "Carries('payments', 'amount', 1200)": "number",
    }
    # the alternative runs (a repeated read, the unpinned note reworded) are correct: still passed
    alternatives = {c for c, x in ledger.items() if x["outcome"] == "alt_pass"}
    assert {"pay/rent:alt-reads:again-0", "pay/rent:alt-text:1.note"} <= alternatives
    assert r["alternatives"] == r["alternatives_still_passing"] == len(alternatives) == 4
    assert r["controls"] == r["controls_still_passing"] == 2 and r["new_false_rejects"] == []
    assert r["postcondition_checks"] == 4
    # free text is never checked
    assert not any(c.get("field") == "note" for t in r["tasks"] for c in t["checks"])
    split = {k["kind"]: k for k in r["by_kind"]}
    assert split["fault arm"] == {"kind": "fault arm", "false_accepts": 4, "now_rejected": 4, "still_accepted": []}
    # extra and extra-oos on both tasks (extra-ni's runs are extra's, counted once)
    assert split["side-effect families"]["now_rejected"] == 4 and "swap effect-absent" not in split
    text = (paid / "repair" / "summary.md").read_text()
    assert "| alternative runs (correct by another route) | 4 pass | 4 pass |" in text
    assert (
        "Carries('payments', 'amount', 1200),  # the reference writes 1200 there (pinned by number)"
        in (paid / "repair" / repair.MODULE).read_text()
    )


def test_the_written_module_rejects_the_wrong_value_and_passes_the_reworded_note(paid):
    module = repair.load_module(paid / "repair" / repair.MODULE)
    cells = {c.cell_id: c for c in Store(paid).read_manifest().cells}
    bench = paybench.PayBench()
    for cid, original, repaired in [
        ("pay/rent:wrong-value:1.amount", True, False),
        ("pay/rent:alt-text:1.note", True, True),
        ("pay/rent:control", True, True),
    ]:
        cell = cells[cid]
        done = replay(bench, cell.task, cell.run)
        assert bench.verify(done.episode, cell.run).passed is original
        assert module.verify(bench, cell.task, done.episode, cell.run, done.start).passed is repaired, cid


def test_a_postcondition_an_alternative_run_fails_is_dropped_and_the_false_accept_named(paid):
    store = Store(paid)
    m, rows = store.read_manifest(), store.rows()
    fa, alt = rows["pay/rent:wrong-value:1.amount"], rows["pay/rent:alt-reads:again-0"]
    ends = repair.ends_of(paybench.PayBench(), m, [fa.cell_id, alt.cell_id])
    start, end = ends[alt.cell_id]
    # an alternative run whose end pays another amount (what a loose oracle, or nondeterminism, would pass)
    ends[alt.cell_id] = (start, {"payments": [*end["payments"][:-1], {**end["payments"][-1], "amount": 1201}]})
    [fix] = repair.synthesize(m, ends, [fa], [alt])
    assert "Carries('payments', 'amount', 1200)" not in [str(c) for c in fix.checks]
    assert fix.dropped["Carries('payments', 'amount', 1200)"].startswith(
        f"it fails the correct run {alt.cell_id} (payments (added).amount: wrote 1201, expected 1200; an alternative run"
    )
    assert "Carries('payments', 'amount', 1200)" in fix.unrepaired[fa.cell_id]


def test_a_swap_censuss_effect_absent_acceptances_are_closed(tmp_path, banking_audit, banking_swap, agentdojo):
    out = tmp_path / "audit"
    shutil.copytree(banking_audit, out)
    result = verimut("repair", str(out), "--swap", str(banking_swap))
    assert result.returncode == 0, result.stderr
    r = json.loads((out / "repair" / "summary.json").read_text())
    census = [json.loads(x) for x in (banking_swap / "cells.jsonl").read_text().splitlines()]
    absent = {x["cell_id"] for x in census if x["outcome"] == "accepted_effect_absent"}
    split = {k["kind"]: k for k in r["by_kind"]}
    assert absent and split["swap effect-absent"]["false_accepts"] == len(absent)
    closed = absent & set(r["now_rejected"])
    assert closed and split["swap effect-absent"]["now_rejected"] == len(closed)
    assert r["new_false_rejects"] == [] and r["alternatives"] == r["alternatives_still_passing"] > 0
    assert r["swap"] == str(banking_swap)
    # each closed one by task i's own postcondition or frame check, named per cell
    caught = {cid: why for t in r["tasks"] for cid, why in t["caught"].items()}
    unrepaired = {cid: why for t in r["tasks"] for cid, why in t["unrepaired"].items()}
    assert closed <= set(caught) and absent - closed <= set(unrepaired)
    assert "swap effect-absent" in result.stdout
    # the module grades task j's run with task i's verifier (verify_as) AND task i's checks
    module = repair.load_module(out / "repair" / repair.MODULE)
    sm = Store(banking_swap).read_manifest()
    cell = next(c for c in sm.cells if c.cell_id == min(closed))
    bench = agentdojo
    done = replay(bench, cell.run_task, cell.run)
    assert bench.verify_as(cell.task, done.episode, cell.run).passed
    done = replay(bench, cell.run_task, cell.run)
    assert not module.verify(bench, cell.task, done.episode, cell.run, done.start, cell.run_task).passed


def test_bad_swap_input_is_one_line(tmp_path, banking_audit, banking_swap, paid):
    out = tmp_path / "audit"
    shutil.copytree(banking_audit, out)
    for swap, said in [
        (tmp_path / "nothing", "is not a verimut output"),
        (paid, "is not a swap census"),
    ]:
        result = verimut("repair", str(out), "--swap", str(swap))
        assert result.returncode == 2 and said in result.stderr and "Traceback" not in result.stderr
    m = Store(out).read_manifest()
    other = tmp_path / "other"
    shutil.copytree(banking_swap, other)
    sm = Store(other).read_manifest()
    with pytest.raises(AuditError, match="is a census of agentdojo v1.1; the audit is of agentdojo v1.2"):
        repair.swap_census(m, _rewritten(other, sm, version="v1.1"))


def _rewritten(directory: Path, sm, **changes) -> Store:
    """The census at `directory` with its manifest changed (and its content hash made to match)."""
    from verimut.core.cells import manifest_hash as content_hash
    from verimut.grammar.pairs import stored

    m = msgspec.structs.replace(sm, **changes)
    store = Store(directory)
    store.write_manifest(
        msgspec.structs.replace(m, content_hash=content_hash(stored(m)))
    )  # the hash of what is written
    return store
