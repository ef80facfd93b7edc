"""Memory flat in the number of cells (issue 44): the summary and the page built from the packed manifest and the
ledger index are byte for byte the ones built from every cell and every row decoded at once (the code before)."""

from __future__ import annotations

import shutil

import msgspec
import pytest

from conftest import verimut
from verimut import api
from verimut.core.cells import Packed
from verimut.engine.store import Ledger, Store

OPTIONS = ["--option", "records=30", "--option", "verify_ms=0", "--option", "seed=0"]


@pytest.mark.parametrize(("command", "tasks"), [("audit", 8), ("swap", 14)])
def test_streamed_outputs_equal_the_whole_ones(tmp_path, command, tasks):
    out = tmp_path / "audit"
    done = verimut(command, "bench.scalebench:create", "--option", f"tasks={tasks}", *OPTIONS, "-o", str(out), "-q")
    assert done.returncode == 1, done.stderr
    streamed, whole = tmp_path / "streamed", tmp_path / "whole"
    shutil.copytree(out, streamed)
    shutil.copytree(out, whole)

    m, rows = Store(streamed).read_manifest(), Store(streamed).rows()
    assert isinstance(m.cells, Packed) and isinstance(rows, Ledger)
    api.summarize(m, rows, Store(streamed))
    # As before: a list of every cell, a dict of every row.
    m_whole = Store(whole).read_manifest()
    m_whole = msgspec.structs.replace(m_whole, cells=list(m_whole.cells))
    api.summarize(m_whole, dict(Store(whole).rows().items()), Store(whole))

    for name in ("summary.json", "summary.md", "report.html"):
        a = (streamed / name).read_text().replace(str(streamed), "DIR")
        b = (whole / name).read_text().replace(str(whole), "DIR")
        assert a == b, f"{name} differs"
    assert "data:image/png;base64," in (streamed / "report.html").read_text()  # the figures were drawn


def test_a_packed_manifest_is_written_and_hashed_as_the_whole_one(tmp_path):
    """manifest.json made a block of cells at a time is the file `encode_json` of every cell made; its hash too."""
    from verimut.core import cells as cells_mod
    from verimut.core.cells import manifest_hash
    from verimut.core.records import content_hash
    from verimut.engine import arms
    from verimut.engine.store import encode_json, manifest_json

    out = tmp_path / "swap"
    done = verimut("swap", "bench.scalebench:create", "--option", "tasks=9", *OPTIONS, "-o", str(out), "-q")
    assert done.returncode == 1, done.stderr
    written = (out / "manifest.json").read_bytes()
    m = Store(out).read_manifest()
    stored = arms.of(m).stored(m)
    whole = msgspec.structs.replace(stored, cells=list(stored.cells))
    assert encode_json(whole, order="sorted") == written  # the file as the code before wrote it
    cells_mod.BLOCK, before = 5, cells_mod.BLOCK  # blocks cut through the columns, the last one short
    try:
        packed = msgspec.structs.replace(stored, cells=Packed.of(stored.cells))
        assert len(packed.cells.stored()._blocks) > 2
        assert b"".join(manifest_json(packed)) == written
        assert manifest_hash(packed) == content_hash(whole) == m.content_hash
    finally:
        cells_mod.BLOCK = before
