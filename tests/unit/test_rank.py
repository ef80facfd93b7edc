"""Rank sensitivity: the sharp interval, Clopper-Pearson bounds, the paper's Table 3 method, the scores CSV,
and the error budget counted from a real AgentDojo audit."""

from __future__ import annotations

import msgspec
import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from verimut.cli import rank as rank_command
from verimut.core.errors import AuditError
from verimut.findings import rank

unit = st.floats(min_value=0.0, max_value=1.0)
budget = st.floats(min_value=0.0, max_value=1.0, exclude_max=True)


# --- the sharp interval -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("q", "alpha", "beta", "expected"),
    [
        (0.5, 0.4, 0.0, (1 / 6, 0.5)),  # (0.5 - 0.4)/0.6
        (0.3, 0.4, 0.0, (0.0, 0.3)),  # (0.3 - 0.4)/0.6 < 0: clipped to 0
        (0.9, 0.0, 0.2, (0.9, 1.0)),  # 0.9/0.8 > 1: clipped to 1
        (0.6, 0.2, 0.25, (0.5, 0.8)),  # 0.4/0.8, 0.6/0.75
        (1.0, 0.4, 0.0, (1.0, 1.0)),
        (0.0, 0.4, 0.5, (0.0, 0.0)),
    ],
)
def test_interval_by_hand(q, alpha, beta, expected):
    assert rank.interval(q, alpha, beta) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("q", "alpha", "beta"), [(-0.1, 0, 0), (1.01, 0, 0), (0.5, 1.0, 0), (0.5, -0.1, 0), (0.5, 0, 1)]
)
def test_interval_refuses_values_outside_their_range(q, alpha, beta):
    with pytest.raises(AuditError):
        rank.interval(q, alpha, beta)


@given(unit, budget, budget)
def test_the_interval_holds_the_shipped_score_and_stays_in_0_1(q, alpha, beta):
    # (q - a)/(1 - a) <= q  iff  a(1 - q) >= 0, and q/(1 - b) >= q: true for every q, a, b in range.
    low, high = rank.interval(q, alpha, beta)
    assert 0.0 <= low <= q <= high <= 1.0


@given(unit)
def test_no_budget_no_doubt(q):
    assert rank.interval(q, 0.0, 0.0) == (q, q)


@given(unit, budget, budget, budget, budget)
def test_a_larger_budget_widens_the_interval(q, a1, a2, b1, b2):
    (a1, a2), (b1, b2) = sorted((a1, a2)), sorted((b1, b2))
    low1, high1 = rank.interval(q, a1, b1)
    low2, high2 = rank.interval(q, a2, b2)
    assert low2 <= low1 + 1e-12 and high2 >= high1 - 1e-12


def test_a_budget_of_one_leaves_that_side_open():
    # What a Clopper-Pearson bound of k = n gives: every pass may be false (low 0), every fail (high 1).
    assert rank._bounds(0.7, 1.0, 0.0) == (0.0, 0.7)
    assert rank._bounds(0.7, 0.0, 1.0) == (0.7, 1.0)


# --- Clopper-Pearson --------------------------------------------------------------------------------------------


def test_clopper_pearson_matches_the_paper():
    assert round(rank.clopper_pearson_upper(2, 5), 4) == 0.8107
    assert round(rank.clopper_pearson_upper(0, 11), 4) == 0.2384


@given(st.integers(min_value=1, max_value=300))
def test_clopper_pearson_closed_forms(n):
    # k = 0: P(X <= 0) = (1 - p)^n = 0.05; k = n - 1: P(X <= n - 1) = 1 - p^n = 0.05; k = n: 1.
    assert rank.clopper_pearson_upper(0, n) == pytest.approx(1 - 0.05 ** (1 / n), abs=1e-9)
    assert rank.clopper_pearson_upper(n - 1, n) == pytest.approx(0.95 ** (1 / n), abs=1e-9)
    assert rank.clopper_pearson_upper(n, n) == 1.0


@given(st.integers(min_value=1, max_value=200), st.data())
def test_clopper_pearson_lies_above_the_rate_and_rises_with_k(n, data):
    k = data.draw(st.integers(min_value=0, max_value=n - 1))
    upper = rank.clopper_pearson_upper(k, n)
    assert k / n < upper <= rank.clopper_pearson_upper(k + 1, n)
    assert rank.clopper_pearson_upper(k, n, 0.99) >= upper


@pytest.mark.parametrize(("k", "n", "confidence"), [(0, 0, 0.95), (3, 2, 0.95), (-1, 2, 0.95), (1, 2, 1.0)])
def test_clopper_pearson_refuses_nonsense(k, n, confidence):
    with pytest.raises(AuditError):
        rank.clopper_pearson_upper(k, n, confidence)


# --- the paper's Table 3 method ---------------------------------------------------------------------------------

# With alpha 0.4, beta 0 (the paper's observed AppWorld budget) a score q maps to [max(0, (q - 0.4)/0.6), q]:
#   normal:    A 0.90 -> [0.8333, 0.90]  B 0.70 -> [0.5, 0.70]  C 0.45 -> [0.0833, 0.45]  D 0.20 -> [0, 0.20]
#     A>B (0.8333 > 0.70), A>C, A>D, B>C (0.5 > 0.45), B>D survive; C>D does not (0.0833 < 0.20): 5/6, top-1 A
#   challenge: A 0.50 -> [0.1667, 0.50]  B 0.40 -> [0, 0.40]  C 0.30 -> [0, 0.30]  D 0.10 -> [0, 0.10]
#     only A>D survives (0.1667 > 0.10): 1/6, top-1 not unique (A's low 0.1667 < B's high 0.40)
# With the paper's illustrative envelope (0.8107, 0.2384): normal A -> [0.4717, 1], B high 0.9191, C high 0.5909,
#   D high 0.2626: only A>D survives (1/6), top-1 not unique; challenge: every low is 0, so 0/6.
# SCORES and the `scores` fixture (a scores.csv of those rows) are in tests/conftest.py, shared with tests/cli.


def surviving(split: rank.SplitResult) -> set[tuple[str, str]]:
    return {(p.above, p.below) for p in split.surviving}


def test_table3_method_observed_budget(scores):
    a = rank.analyze(rank.read_scores(scores), 0.4, 0.0)
    normal, challenge = a.splits
    assert (normal.split, challenge.split) == ("test_normal", "test_challenge")
    assert [s.system for s in normal.systems] == ["A", "B", "C", "D"]
    assert normal.systems[2].low == pytest.approx(0.05 / 0.6)
    assert surviving(normal) == {("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D")}
    assert (normal.pairs_surviving, normal.pairs, normal.top1) == (5, 6, "A")
    assert surviving(challenge) == {("A", "D")}
    assert (challenge.pairs_surviving, challenge.pairs, challenge.top1) == (1, 6, None)


def test_table3_method_illustrative_envelope(scores):
    hi = rank.clopper_pearson_upper(2, 5), rank.clopper_pearson_upper(0, 11)
    normal, challenge = rank.analyze(rank.read_scores(scores), *hi).splits
    assert surviving(normal) == {("A", "D")} and normal.top1 is None
    assert surviving(challenge) == set() and challenge.top1 is None


def test_fourteen_systems_make_91_pairs_and_no_budget_orders_distinct_scores():
    rows = [rank.Row(f"s{i}", "test", i / 20) for i in range(14)]
    (split,) = rank.analyze(rows, 0.0, 0.0).splits
    assert (split.pairs_surviving, split.pairs, split.top1) == (91, 91, "s13")


def test_a_tie_is_never_identified():
    rows = [rank.Row("x", "t", 0.5), rank.Row("y", "t", 0.5), rank.Row("z", "t", 0.1)]
    (split,) = rank.analyze(rows, 0.0, 0.0).splits
    assert surviving(split) == {("x", "z"), ("y", "z")} and split.top1 is None


systems = st.lists(unit, min_size=1, max_size=8).map(lambda qs: [rank.Row(f"s{i}", "t", q) for i, q in enumerate(qs)])


@given(systems, budget, budget, budget, budget)
def test_identified_orders_agree_with_the_scores_and_shrink_as_the_budget_grows(rows, a1, a2, b1, b2):
    (a1, a2), (b1, b2) = sorted((a1, a2)), sorted((b1, b2))
    (small,) = rank.analyze(rows, a1, b1).splits
    (large,) = rank.analyze(rows, a2, b2).splits
    score = {r.system: r.score for r in rows}
    assert all(score[p.above] > score[p.below] for p in small.surviving)
    assert surviving(large) <= surviving(small)
    assert large.top1 in (None, small.top1)
    if small.top1 is not None:
        assert small.pairs_surviving >= len(rows) - 1  # the top is identified above every other system


# --- the scores CSV ---------------------------------------------------------------------------------------------


def test_read_scores_ignores_extra_columns_and_whitespace(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("\ufeffsplit, score ,system,extra\ntest, 0.25 , m1 ,x\n\ntest,1,m2,\n")
    assert rank.read_scores(path) == [rank.Row("m1", "test", 0.25), rank.Row("m2", "test", 1.0)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("system,split\nA,t\n", "line 1: the header lacks column(s) score"),
        ("system,split,score\n", "has a header but no rows"),
        ("system,split,score\nA,t,0.5\nB,t,high\n", "line 3: score 'high' is not a number"),
        ("system,split,score\nA,t,0.5\nB,t,45\n", "line 3: score 45.0 is outside [0, 1]"),
        ("system,split,score\nA,t,nan\n", "line 2: score nan is outside [0, 1]"),
        ("system,split,score\nA,t,0.5\nB,t,0.4\nA,t,0.3\n", "line 4: system 'A' in split 't' again (first on line 2)"),
        ("system,split,score\nA,t,0.5\nB,t\n", "line 3: score '' is not a number"),
        ("system,split,score\n,t,0.5\n", "line 2: empty system"),
    ],
)
def test_bad_scores_name_the_line(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(AuditError, match="^" + str(path).replace(".", r"\.")) as e:
        rank.read_scores(path)
    assert message in str(e.value)


def test_a_missing_scores_file_is_an_audit_error(tmp_path):
    with pytest.raises(AuditError, match="cannot read scores"):
        rank.read_scores(tmp_path / "nope.csv")


# --- the command (through a small typer app: the CLI registers it as `verimut rank`) ----------------------------

app = typer.Typer()
app.command()(rank_command.command)


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_command_with_a_given_budget(scores, tmp_path):
    out = tmp_path / "rank.json"
    result = run(scores, "--alpha", "0.4", "--beta", "0", "--json", out)
    assert result.exit_code == 0, result.output
    assert "pairs surviving: 5/6" in result.output and "top-1 unique: yes (A)" in result.output
    assert "pairs surviving: 1/6" in result.output and "top-1 unique: no" in result.output
    assert "envelope" not in result.output  # no counts, so no envelope
    report = msgspec.json.decode(out.read_bytes(), type=rank.Report)
    assert report.budget.alpha == 0.4 and not report.budget.counted and len(report.analyses) == 1
    assert "Overlap does not show a rank error" in report.note


@pytest.mark.parametrize("args", [(), ("--alpha", "0.4"), ("--beta", "0")])
def test_command_needs_a_budget(scores, args):
    result = run(scores, *args)
    assert isinstance(result.exception, AuditError)
    assert str(result.exception) == "give --audit DIR, or both --alpha and --beta"


def test_command_refuses_a_budget_outside_0_1(scores):
    result = run(scores, "--alpha", "1.5", "--beta", "0")
    assert isinstance(result.exception, AuditError) and "alpha 1.5" in str(result.exception)


def test_not_an_audit_directory(tmp_path):
    with pytest.raises(AuditError, match="not a verimut output"):
        rank.budget_from_audit(tmp_path)
