"""The aimed out-of-scope search's selection rule (grammar/oos.py `aimed`, `--aim`): which writes are planted."""

from __future__ import annotations

import pytest

from verimut.core.run import Action
from verimut.grammar import oos
from verimut.grammar.faults import ON_PAGE, OutOfScope, Unplanted
from verimut.oracle.state import NEW


def _write(tool: str, *touches: str, source: str = "s/t", at: int = 0) -> OutOfScope:
    return OutOfScope(source, at, Action(tool, {}), touches, "")


# The trial's order: two writes into the blind spot `todos`, one into the blind spot `contacts` (its new records,
# apart under the NEW suffix), one into `settings` (the verifier reads it), one into `todos` and `settings` both.
KEPT = [
    _write("add_todo", "todos", at=1),
    _write("set_setting", "settings", at=2),
    _write("pin_todo", "todos", at=3),
    _write("add_contact", "contacts" + NEW, at=4),
    _write("tidy", "settings", "todos", at=5),
]
BLIND = {"todos", "contacts"}


def test_one_write_per_blind_spot_is_planted_first_and_stands_for_the_others_there():
    got = oos.aimed(KEPT, BLIND, oos.BLIND_SPOT)
    assert [c.action.name for c in got] == ["add_todo", "add_contact", "set_setting", "tidy"]
    assert got[0].covers == (Unplanted("pin_todo", "todos", "s/t", 3),)
    assert got[1].covers == ()


def test_one_write_per_verifier_stands_for_every_other_write_into_its_blind_spots():
    got = oos.aimed(KEPT, BLIND, oos.VERIFIER)
    assert [c.action.name for c in got] == ["add_todo", "set_setting", "tidy"]
    assert [u.tool for u in got[0].covers] == ["pin_todo", "add_contact"]
    assert got[0].covers[1].collection == "contacts"  # named as the state names it, the NEW suffix taken off


def test_writes_into_a_collection_the_verifier_reads_are_all_kept():
    # `tidy` lands in a blind spot too, but also in `settings`: only a replay says whether the verifier notices.
    for per in oos.AIMS:
        got = oos.aimed(KEPT, BLIND, per)
        assert {"set_setting", "tidy"} <= {c.action.name for c in got}
        assert all(not c.covers for c in got if c.action.name in ("set_setting", "tidy"))


def test_no_confirmed_blind_spot_plants_every_write_as_before():
    assert oos.aimed(KEPT, set(), oos.BLIND_SPOT) == KEPT


def test_a_page_write_is_never_aimed():
    page = OutOfScope("p/t", ON_PAGE, Action("click", {}), ("todos",), "")
    assert oos.aimed([page, page], BLIND, oos.VERIFIER) == [page, page]


def test_an_unknown_aim_is_refused():
    with pytest.raises(ValueError, match="unknown aim"):
        oos.aimed(KEPT, BLIND, "everything")


def test_per_blind_spot_a_write_reaching_a_blind_spot_no_planted_write_reaches_is_planted():
    # `both` reaches `contacts` as well as `todos`: planted, since no write before it reaches `contacts`; `again`
    # reaches only what `first` and `both` reach, so it is carried by the one that reached its first collection.
    kept = [_write("first", "todos"), _write("both", "todos", "contacts"), _write("again", "contacts", "todos")]
    got = oos.aimed(kept, BLIND, oos.BLIND_SPOT)
    assert [c.action.name for c in got] == ["first", "both"]
    assert [u.tool for u in got[1].covers] == ["again"] and got[0].covers == ()
