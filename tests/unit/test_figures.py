"""The report's figures show benchmark text as text: a `$` in a task id is a dollar sign, not mathtext."""

from __future__ import annotations

import pytest

from verimut import figures

DOLLARS = ["shop/refund_$5_or_$10", "pay $5 and $10", "a$_x$"]


@pytest.fixture
def drawn(monkeypatch) -> list[object]:
    """The figures given to `data_uri`, kept so their texts can be inspected after drawing."""
    kept: list[object] = []
    real = figures.data_uri

    def keep(fig):  # type: ignore[no-untyped-def]
        kept.append(fig)
        return real(fig)

    monkeypatch.setattr(figures, "data_uri", keep)
    return kept


def _texts(fig) -> list:  # type: ignore[no-untyped-def]
    from matplotlib.text import Text

    return [t for t in fig.findobj(Text) if t.get_text()]


@pytest.mark.parametrize("name", DOLLARS)
def test_a_dollar_in_a_task_id_draws_as_text(name, drawn):
    assert figures.false_accepts_per_task({name: {"extra": 1}}, ["extra"]).startswith("data:image/png;base64,")
    assert figures.outcome_heatmaps({name: {"extra": {"false_accept": 1}}}, ["false_accept"], ["extra"])
    assert figures.swap_matrix(name, [name, "other"], {(name, "other"): ("1", "accepted_effect_absent")})
    assert figures.frame_coverage(
        name, [name, "other"], [name, "mail"], {(name, name): (1, 2), ("other", "mail"): (0, 1)}
    )
    shown = [t for fig in drawn for t in _texts(fig) if "$" in t.get_text()]
    assert shown, "the dollar-sign names should appear on the figures"
    assert not any(t.get_parse_math() for t in shown)
