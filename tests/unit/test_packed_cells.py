"""The manifest's cells packed (core/cells.py) and scored as streams (issue 44): the same cells, in the same order,
grouped as before; the executors read groups as workers need them."""

from __future__ import annotations

import pickle

import msgspec
import pytest

from verimut.core import cells as cells_mod
from verimut.core.cells import Packed
from verimut.core.records import Cell
from verimut.engine.pipeline import groups, streamed_groups
from verimut.executors.drive import Pending


def _cells(n: int, runs: int = 7) -> list[Cell]:
    return [
        Cell(f"t/{k}:swap:r{k % runs}", f"t/{k}", "swap", f"r{k % runs}", None, "", {"run_task": f"r{k // 10}"})
        for k in range(n)
    ]


def _packed(cs: list[Cell]) -> Packed:
    return Packed.pack(msgspec.json.encode(c) for c in cs)


@pytest.mark.parametrize("n", [0, 1, 5, 23])
def test_packed_cells_read_as_the_list(monkeypatch, n):
    monkeypatch.setattr(cells_mod, "BLOCK", 4)  # several blocks, the last one short
    cs = _cells(n)
    p = _packed(cs)
    assert len(p) == n and list(p) == cs and p == cs
    assert [p[k] for k in range(n)] == cs and [p[-k] for k in range(1, n + 1)] == cs[::-1][:n]
    assert p[1:7] == cs[1:7] and p[::3] == cs[::3]
    with pytest.raises(IndexError):
        p[n]
    assert list(pickle.loads(pickle.dumps(p))) == cs


def test_expanded_cells_are_expanded_when_read():
    cs = _cells(9)
    p = _packed(cs).expanded(_noted)
    assert list(p) == [msgspec.structs.replace(c, note="read") for c in cs]
    assert p[3].note == "read"


def _noted(c: Cell) -> Cell:
    return msgspec.structs.replace(c, note="read")


def test_streamed_groups_are_the_groups():
    together = _cells(35)  # run tasks r0..r3, each a run of consecutive cells
    assert list(streamed_groups(lambda: iter(together))) == groups(together)
    apart = together + [msgspec.structs.replace(together[0], cell_id="again")]  # r0 again, after r3
    assert list(streamed_groups(lambda: iter(apart))) == groups(apart)
    assert list(streamed_groups(lambda: iter([]))) == []


def test_pending_gives_groups_in_order_reading_only_what_is_asked():
    read: list[int] = []

    def made():
        for k in range(5):
            read.append(k)
            yield [k]

    pending = Pending(made())
    assert read == []
    assert pending.count(2) == 2 and read == [0, 1]
    assert [pending.pop() for _ in range(3)] == [[0], [1], [2]]
    assert pending and pending.count(10) == 2
    assert [pending.pop(), pending.pop()] == [[3], [4]]
    assert not pending
    with pytest.raises(IndexError):
        pending.pop()
