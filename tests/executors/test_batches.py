"""Batched dispatch: batch sizes follow the measured cost, results come back one per cell, and a
hang or a death in the middle of a batch cuts that one cell while the rest of the batch is scored."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verimut import adapters
from verimut.core.records import CellResult, Evidence, Outcome
from verimut.engine import executor, pipeline
from verimut.engine.executor import MAX_BATCH, Batches
from verimut.engine.scoring import Source
from verimut.engine.store import Store


def _result(seconds: float) -> CellResult:
    return CellResult("c", "b", "t", "f", "-", Outcome.REJECTED, False, Evidence(edit=""), seconds=seconds)


def test_one_cell_until_a_cost_is_measured():
    assert Batches().size() == 1


@given(st.lists(st.floats(min_value=0.0, max_value=600.0), min_size=1, max_size=50))
def test_a_batch_holds_about_a_quarter_second_of_work_and_never_less_than_one_cell(costs):
    b = Batches()
    for c in costs:
        b.add(_result(c))
    mean = sum(costs) / len(costs)
    size = b.size()
    assert 1 <= size <= MAX_BATCH
    if mean * MAX_BATCH > executor.BATCH_SECONDS:
        assert size == max(1, int(executor.BATCH_SECONDS / mean))
    else:
        assert size == MAX_BATCH


def test_cheap_cells_go_in_large_batches_and_slow_ones_alone():
    cheap, slow = Batches(), Batches()
    for _ in range(10):
        cheap.add(_result(0.001))
        slow.add(_result(7.0))
    assert 240 <= cheap.size() <= 250 and slow.size() == 1


class _Whole(Batches):
    """Every group in one batch, so the hang below is in the middle of one."""

    def size(self) -> int:
        return MAX_BATCH


@pytest.mark.parametrize("name", ["pool", "ray"])
def test_a_hang_and_a_death_inside_a_batch_cut_only_their_cell(name, tmp_path, monkeypatch):
    monkeypatch.setattr(executor, "Batches", _Whole)
    bench = adapters.load("tests.troublebench:benchmark")
    store = Store(tmp_path)
    m = pipeline.prepare(bench, store, ["t/ok", "t/midhang", "t/dielate"], pipeline.select_families(), lambda _: None)
    run = executor.make(name, workers=1, timeout=3)
    try:
        rows = pipeline.score_all(bench, m, store, run, source=Source.here("tests.troublebench:benchmark"))
    finally:
        run.close()
    assert set(rows) == {c.cell_id for c in m.cells}
    hung = "t/midhang:omit:at-0"
    assert rows[hung].outcome == Outcome.ERROR
    assert "timed out after 3 s" in (rows[hung].reason or "")
    # omit:at-0 hangs in the middle of t/midhang's one batch: the cell before it (claim-only, scored and
    # waiting to be sent back) and the cells after it are scored all the same, and only it is cut
    others = [c.cell_id for c in m.cells if c.task == "t/midhang" and c.cell_id != hung]
    assert "t/midhang:claim-only" in others
    assert [(c, rows[c].reason) for c in others if rows[c].outcome == Outcome.ERROR] == []
    # t/dielate's cells that write twice (extra, extra-oos; extra-ni's run is extra's, not scored again) kill their
    # worker one after the other, inside one batch, behind cells already scored: each death is recorded on its own
    # cell, and on no other
    dies = sorted(
        c.cell_id
        for c in m.cells
        if c.task == "t/dielate" and c.run and len(c.run.actions) > 1 and c.same_run_as is None
    )
    dead = sorted(r.cell_id for r in rows.values() if r.task == "t/dielate" and r.outcome == Outcome.ERROR)
    assert len(dies) >= 2 and dead == dies
    assert all("died" in (rows[c].reason or "") for c in dead)
    # every cell once in the ledger, in one line each
    lines = (tmp_path / "cells.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["cell_id"] for line in lines) == sorted(rows)
