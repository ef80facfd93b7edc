"""report.html at scale: its per-task tables show the top `figures.TOP` rows open and fold or bound the rest,
while a small audit's tables keep every row in their order (the page of an audit up to `TOP` tasks is unchanged)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from verimut.findings import coverage
from verimut.outputs import figures
from verimut.outputs.report_html import _coverage_context, split_rows

N = 2000


@given(st.dictionaries(st.text(min_size=1, max_size=4), st.integers(0, 9), max_size=60), st.integers(1, 50))
def test_split_rows_keeps_every_row_once(counts, limit):
    shown, folded = split_rows(counts, limit)
    assert sorted(shown + folded) == sorted(counts)
    if len(counts) <= limit:
        assert (shown, folded) == (list(counts), [])
    else:
        assert len(shown) == limit
        assert min(counts[t] for t in shown) >= max(counts[t] for t in folded)
        assert folded == [t for t in counts if t in set(folded)]  # the rest in their given order


def _verifier(k: int) -> coverage.Verifier:
    missed = k % 4
    tally = coverage.Tally(side_effects=4, rejected=4 - missed, false_accepts=missed)
    return coverage.Verifier("scale", "user", 4, 4 - missed, missed, (4 - missed) / 4, {"notes": tally})


def test_the_coverage_section_of_2000_verifiers_is_bounded():
    verifiers = {f"scale/task_{k:05d}": _verifier(k) for k in range(N)}
    group = coverage.Group(N, N, 0.5, 4 * N, 0, 0, N)
    fc = coverage.FrameCoverage(["extra"], verifiers, {}, {"scale": group}, {"user": group}, "note")
    ctx = _coverage_context(fc)
    assert ctx is not None
    assert ctx["listed"] == N and len(ctx["verifiers"]) == figures.TOP
    assert all(row["v"].false_accepts == 3 for row in ctx["verifiers"])  # the most false accepts first
    [heatmap] = ctx["heatmaps"]
    assert len(heatmap["figure"]) < 400_000  # one bounded PNG (base64), not one row per verifier
