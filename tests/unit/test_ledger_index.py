"""The ledger read as an index (issue 44): rows read from the file when asked for, the same mapping a dict of the
decoded rows was (order, a repeated id, a torn tail, a bad line), and no row held."""

from __future__ import annotations

import msgspec
import pytest

from verimut.core.errors import AuditError
from verimut.core.records import CellResult, Evidence, Outcome
from verimut.engine.store import LEDGER, TORN, Ledger, Store


def _row(n: int, outcome: Outcome = Outcome.REJECTED, note: str = "e") -> CellResult:
    return CellResult(f"t/{n}:extra", "bench", f"t/{n}", "extra", "-", outcome, False, Evidence(edit=note))


def _line(row: CellResult) -> bytes:
    return msgspec.json.encode(row) + b"\n"


def _as_dict(data: bytes) -> dict[str, CellResult]:
    """What the ledger meant before the index: every whole row decoded, a later row of an id replacing it."""
    rows: dict[str, CellResult] = {}
    for line in data.split(b"\n")[:-1]:
        if line.strip():
            row = msgspec.json.decode(line, type=CellResult)
            rows[row.cell_id] = row
    return rows


def test_the_index_is_the_mapping_of_the_decoded_rows(tmp_path):
    rows = [_row(k, Outcome.FALSE_ACCEPT if k % 3 == 0 else Outcome.REJECTED, "é" * k) for k in range(50)]
    data = b"".join(_line(r) for r in rows) + b"\n" + _line(_row(7, Outcome.ERROR, "again"))  # a blank line, a redo
    (tmp_path / LEDGER).write_bytes(data)
    got = Store(tmp_path).rows()
    want = _as_dict(data)
    assert isinstance(got, Ledger)
    assert list(got) == list(want)  # ledger order; the repeated id keeps its first place
    assert dict(got.items()) == want
    assert got["t/7:extra"].outcome == Outcome.ERROR  # ... and its last row
    assert len(got) == 50 and "t/3:extra" in got and "t/99:extra" not in got
    assert got.get("t/99:extra") is None and got.get("t/1:extra") == want["t/1:extra"]
    with pytest.raises(KeyError):
        got["t/99:extra"]


def test_the_index_holds_places_not_rows(tmp_path):
    (tmp_path / LEDGER).write_bytes(b"".join(_line(_row(k)) for k in range(20)))
    got = Store(tmp_path).rows()
    assert all(isinstance(place, int) for place in got._places.values())
    assert got["t/5:extra"] is not got["t/5:extra"]  # decoded afresh each time: nothing kept


def test_rows_appended_after_the_index_are_not_in_it_and_old_ones_still_read(tmp_path):
    store = Store(tmp_path)
    (tmp_path / LEDGER).write_bytes(b"".join(_line(_row(k)) for k in range(3)))
    before = store.resume()
    appender = store.appender()
    appender.append(_row(3))
    appender.close()
    assert list(before) == [f"t/{k}:extra" for k in range(3)]
    assert before["t/2:extra"] == _row(2)
    assert list(store.rows()) == [f"t/{k}:extra" for k in range(4)]


def test_a_torn_tail_is_skipped_by_rows_and_moved_by_resume(tmp_path):
    whole = b"".join(_line(_row(k)) for k in range(4))
    torn = _line(_row(4))[:-9]
    (tmp_path / LEDGER).write_bytes(whole + torn)
    store = Store(tmp_path)
    assert list(store.rows()) == [f"t/{k}:extra" for k in range(4)]
    assert (tmp_path / LEDGER).read_bytes() == whole + torn  # rows changes nothing
    assert dict(store.resume().items()) == _as_dict(whole)
    assert (tmp_path / LEDGER).read_bytes() == whole
    assert (tmp_path / TORN).read_bytes() == torn + b"\n"


def test_a_bad_line_in_the_middle_is_refused_with_its_number(tmp_path):
    (tmp_path / LEDGER).write_bytes(_line(_row(0)) + b"{not json\n" + _line(_row(1)))
    with pytest.raises(AuditError, match="line 2 is not a cell record"):
        Store(tmp_path).rows()


def test_rows_across_the_reading_blocks(tmp_path, monkeypatch):
    from verimut.engine import store as store_mod

    monkeypatch.setattr(store_mod, "_BLOCK", 37)  # rows cut by every block boundary
    data = b"".join(_line(_row(k, note="x" * (k * 7 % 50))) for k in range(40))
    (tmp_path / LEDGER).write_bytes(data)
    assert dict(Store(tmp_path).rows().items()) == _as_dict(data)


def test_no_ledger_is_an_empty_index(tmp_path):
    assert len(Store(tmp_path).rows()) == 0
