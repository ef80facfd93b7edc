"""The report's pure parts: action and state diffs, and the run log's date and wall time."""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from verimut.core.records import Difference, RunRecord
from verimut.core.run import Action, Run
from verimut.outputs.cell_view import action_diff, state_diff
from verimut.outputs.report_html import when

actions = st.lists(
    st.sampled_from([Action("a"), Action("b", {"x": 1}), Action("b", {"x": 2}), Action("c")]), max_size=6
)


@given(actions, actions)
def test_an_action_diff_holds_both_runs(a, b):
    lines = action_diff(Run(tuple(a)), Run(tuple(b)))
    assert [x.text for x in lines if x.op in " -"] == [x.describe() for x in a]
    assert [x.text for x in lines if x.op in " +"] == [x.describe() for x in b]


def test_the_state_diff_shows_records_and_changed_fields():
    [d] = state_diff(
        msgspec.convert(
            [
                {
                    "collection": "bank.transactions",
                    "counts": "1 added, 1 changed",
                    "added": [{"key": "9", "record": {"amount": 98.7}}],
                    "removed": [],
                    "changed": [{"key": "3", "fields": {"subject": ["a", "b"]}}],
                }
            ],
            list[Difference],
        )
    )
    assert [(x.op, x.text) for x in d.lines] == [("+", '[9] {"amount":98.7}'), ("~", '[3].subject: "a" -> "b"')]


def test_date_and_wall_time_come_from_the_run_log():
    runs = [
        RunRecord("2026-01-02T03:04:05+00:00", 10.0, 5, "fault"),
        RunRecord("2026-01-02T04:00:00+00:00", 2.5, 1, "fault"),
    ]
    said = when(runs)
    assert said["date"] == "2026-01-02 03:04:05 UTC to 2026-01-02 04:00:02 UTC"
    assert said["wall time"].startswith("12.5 s over 2 invocations")
    assert when([])["wall time"].startswith("not recorded")


@given(st.lists(st.text(max_size=30), min_size=1, max_size=12), st.text(max_size=40))
def test_later_fills_each_placeholder_with_its_own_figure_and_nothing_else(uris, text):
    from verimut.outputs.report_html import Later

    later = Later()
    marks = [later(lambda u: u, u) for u in uris]
    page = text + "|".join(marks) + text + "verimut-figure-0." + later.mark[:-1]
    assert later.fill(page) == text + "|".join(uris) + text + "verimut-figure-0." + later.mark[:-1]


def test_the_page_template_is_compiled_once_and_kept_in_the_cache(tmp_path, monkeypatch):
    from verimut.outputs import report_html

    monkeypatch.setattr(report_html, "CACHE", tmp_path)
    first = report_html._env().get_template("report.html.j2")
    kept = list((tmp_path / "templates").iterdir())
    assert len(kept) == 1 and kept[0].stat().st_size > 0
    # A second environment (the next audit) loads the compiled code rather than compiling again.
    calls = []
    monkeypatch.setattr(report_html.jinja2.Environment, "compile", lambda *a, **k: calls.append(a))
    again = report_html._env().get_template("report.html.j2")
    assert calls == [] and again.name == first.name


def test_a_cache_that_cannot_be_made_only_costs_the_time(tmp_path, monkeypatch):
    from verimut.outputs import report_html

    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setattr(report_html, "CACHE", blocked)  # a file where the directory would be
    assert report_html._env().get_template("report.html.j2") is not None
