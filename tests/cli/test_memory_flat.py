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
    figure = "data:image/png;base64," if command == "audit" else "data:image/svg+xml;base64,"  # the swap matrix
    assert figure in (streamed / "report.html").read_text()  # the figures were drawn


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


@pytest.mark.parametrize(("command", "tasks"), [("audit", 8), ("swap", 10)])
def test_streamed_diff_and_baseline_equal_the_whole_ones(tmp_path, command, tasks):
    """`verimut diff` and `verimut baseline --keep` read each audit in passes (the ids and the findings' cells held,
    not every cell by id): their files are the ones made from a list of every cell and a dict of every row. The two
    audits differ (another seed, two more tasks), so findings open, close, go and cells match by run."""
    from verimut.cli.baseline import load
    from verimut.engine.store import encode_json
    from verimut.findings import baseline as baseline_mod
    from verimut.findings import diff as diff_mod

    dirs = {}
    for name, seed, n in (("a", 0, tasks), ("b", 1, tasks + 2)):
        dirs[name] = tmp_path / name
        opts = ["--option", "records=30", "--option", "verify_ms=0", "--option", f"seed={seed}"]
        done = verimut(command, "bench.scalebench:create", "--option", f"tasks={n}", *opts, "-o", str(dirs[name]), "-q")
        assert done.returncode == 1, done.stderr
    diffed = verimut("diff", str(dirs["a"]), str(dirs["b"]), "-o", str(tmp_path / "diff"))
    assert diffed.returncode in (0, 1), diffed.stderr
    kept = tmp_path / "a.json"
    kept.write_text(verimut("baseline", str(dirs["a"])).stdout)
    shrunk = verimut("baseline", str(dirs["b"]), "--keep", str(kept))
    assert shrunk.returncode == 0, shrunk.stderr

    def whole(name: str) -> diff_mod.Audited:
        m, rows = Store(dirs[name]).finished()
        return diff_mod.Audited(msgspec.structs.replace(m, cells=list(m.cells)), dict(rows.items()), str(dirs[name]))

    a, b = whole("a"), whole("b")
    d = diff_mod.compare(a, b)
    assert d.found["before"] and sum(sum(s.values()) for s in d.counts.values())
    assert (tmp_path / "diff" / "diff.json").read_bytes() == encode_json(d)
    assert (tmp_path / "diff" / "diff.md").read_text() == diff_mod.markdown(d)
    given = load(kept).baseline
    b_whole = baseline_mod.shrink(given, b.manifest, baseline_mod.match(given, b.manifest, b.rows))
    assert shrunk.stdout.encode() == encode_json(b_whole) + b"\n"
