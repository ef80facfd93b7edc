"""`cell_view.inert`: every character a terminal would act on is shown as its escape; other text is untouched."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from verimut.outputs.cell_view import inert


def _active(ch: str) -> bool:
    return (
        unicodedata.category(ch) == "Cc" and ch not in "\t\n"
    ) or ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@given(st.text())
def test_no_active_character_survives(text):
    assert not any(_active(ch) for ch in inert(text))


@given(st.text().filter(lambda t: not any(_active(ch) for ch in t)))
def test_text_without_active_characters_is_unchanged(text):
    assert inert(text) == text


@given(st.text())
def test_every_active_character_is_shown_as_its_escape(text):
    shown = inert(text)
    assert shown == "".join(ch.encode("unicode_escape").decode() if _active(ch) else ch for ch in text)
