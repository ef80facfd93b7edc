"""report.html's long finding lists paged (report_html.Pages): which finding is on which page, and the links."""

from __future__ import annotations

from verimut.outputs.report_html import Pages


def pages(n: int, per: int = 3) -> Pages:
    return Pages("Confirmed false accepts", "findings", "findings", "false_accept", [f"t:{k}" for k in range(n)], per)


def test_a_list_that_fits_is_one_page_and_links_nowhere_else():
    for n in (0, 1, 3):
        p = pages(n)
        assert p.count == 1
        assert p.links() == {}
        assert p.chunk(1) == p.ids


def test_each_finding_is_on_one_page_in_order():
    p = pages(7)
    assert p.count == 3
    assert [p.chunk(k) for k in (1, 2, 3)] == [["t:0", "t:1", "t:2"], ["t:3", "t:4", "t:5"], ["t:6"]]
    assert [(p.first(k), p.last(k)) for k in (1, 2, 3)] == [(1, 3), (4, 6), (7, 7)]
    assert p.name(2) == "report/findings-0002.html"


def test_links_from_report_html_and_between_pages():
    p = pages(7)
    # report.html links the findings past its own to their page, in the report/ folder beside it.
    assert p.links() == {
        "t:3": "report/findings-0002.html#cell-t:3",
        "t:4": "report/findings-0002.html#cell-t:4",
        "t:5": "report/findings-0002.html#cell-t:5",
        "t:6": "report/findings-0003.html#cell-t:6",
    }
    assert p.href(1, 1) == "#findings"
    assert p.href(3, 1) == "report/findings-0003.html"
    # A page in report/ links its siblings by name and report.html one folder up.
    assert p.href(3, 2) == "findings-0003.html"
    assert p.href(1, 2) == "../report.html#findings"
