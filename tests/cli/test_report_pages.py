"""report.html pages a long list of findings (issue 44): the first `PAGE` inline, each further `PAGE` on a page of
its own under report/, linked both ways; every finding's evidence block is on exactly one page, in order, the same
bytes as the one long page; a later report with fewer pages removes the stale ones."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import verimut
from verimut.engine.store import Store
from verimut.outputs import bundle, report_html

OPTIONS = ["--option", "records=30", "--option", "verify_ms=0", "--option", "seed=0"]
CELL = re.compile(r'<details class="cell" id="cell-([^"]*)".*?</details>', re.DOTALL)


def rebuild(directory: Path, per: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_html, "PAGE", per)
    report_html.rebuild(Store(directory))


def blocks(path: Path, directory: Path) -> list[str]:
    return [m.group(0) for m in CELL.finditer(path.read_text().replace(str(directory), "DIR"))]


@pytest.mark.parametrize(("command", "tasks"), [("audit", 8), ("swap", 14)])
def test_long_finding_lists_are_paged_and_linked(tmp_path, monkeypatch, command, tasks):
    out = tmp_path / "audit"
    done = verimut(command, "bench.scalebench:create", "--option", f"tasks={tasks}", *OPTIONS, "-o", str(out), "-q")
    assert done.returncode == 1, done.stderr
    one, paged = tmp_path / "one", tmp_path / "paged"
    for copy in (one, paged):
        shutil.copytree(out, copy)
    rebuild(one, 10**6, monkeypatch)
    whole = blocks(one / "report.html", one)
    assert not (one / "report").exists()
    assert len(whole) > 4, "the audit should find enough findings to page"

    rebuild(paged, 2, monkeypatch)
    main = paged / "report.html"
    files = sorted((paged / "report").iterdir())
    names = [f.name for f in files]
    assert names[0] == "findings-0002.html"
    # Every block once, in the order of the one long page: report.html's first, then each list's pages in turn.
    first = blocks(main, paged)
    on_pages = {f.name: blocks(f, paged) for f in files}
    fa = [b for n in names if n.startswith("findings-") for b in on_pages[n]]
    fr = [b for n in names if n.startswith("rejects-") for b in on_pages[n]]
    assert all(1 <= len(b) <= 2 for b in on_pages.values())

    def rejects(bs: list[str]) -> list[str]:
        return [b for b in bs if 'class="badge false_reject"' in b]

    def accepts(bs: list[str]) -> list[str]:
        return [b for b in bs if 'class="badge false_reject"' not in b]

    assert accepts(first) + fa == accepts(whole)
    assert rejects(first) + fr == rejects(whole)
    assert not rejects(fa) and not accepts(fr)

    # Each link to a finding page names a page that exists and a cell on it; each page links back and across.
    text = main.read_text()
    for href in set(re.findall(r'href="(report/[^"#]*)(?:#cell-([^"]*))?"', text)):
        page, cid = href
        assert (paged / page).is_file(), page
        if cid:
            assert f'id="cell-{cid}"' in (paged / page).read_text(), (page, cid)
    for f in files:
        html = f.read_text()
        assert 'href="../report.html#' in html
        for sibling in re.findall(r'href="((?:findings|rejects)-\d{4}\.html)"', html):
            assert (paged / "report" / sibling).is_file()

    assert "report/findings-0002.html" in bundle._files(paged)  # a bundle seals the pages with the rest

    # A report with fewer pages leaves none of the old ones behind.
    rebuild(paged, 10**6, monkeypatch)
    assert not (paged / "report").exists()
    assert (paged / "report.html").read_text().replace(str(paged), "DIR") == (one / "report.html").read_text().replace(
        str(one), "DIR"
    )


def test_a_link_to_a_finding_on_a_later_page_opens_it_in_chromium(tmp_path, monkeypatch):
    """Opened from disk (file://, no server): report.html's link leads to the finding page and opens the evidence."""
    from browser import load

    out = tmp_path / "audit"
    done = verimut("audit", "bench.scalebench:create", "--option", "tasks=8", *OPTIONS, "-o", str(out), "-q")
    assert done.returncode == 1, done.stderr
    rebuild(out, 2, monkeypatch)
    later = CELL.search((out / "report" / "findings-0002.html").read_text())
    assert later is not None
    visit = load(out / "report.html", follow=later.group(1))
    assert visit.console_errors == [] and visit.page_errors == [] and visit.outside == []
    assert visit.opened_by_link is True
    assert (out / "report" / "findings-0002.html").resolve().as_uri() in visit.requests
