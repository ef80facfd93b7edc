"""The answer edits, on generated values of every kind (grammar/answers.py).

A value of each kind is generated, set in an answer ("it is <value> in all."), and found there by `values`; each
edit is then checked for what the answer families and the oracle rely on: `wrong` and `superstring` write
another value of the same kind that no longer states the reference's (`whole_token` is False: the oracle's
`confirm` calls it wrong), `superstring`'s contains it, `hedge` states both candidates, and every
`alternative_forms` form means the same value.
"""

from __future__ import annotations

import datetime
import string
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from verimut.grammar import answers
from verimut.grammar.answers import DATE, DATETIME, EMAIL, NAME, NUMBER, TIME, URL
from verimut.grammar.pinned import ValueIndex, index_values
from verimut.repair.checks import AnswerStates

lower = st.text(string.ascii_lowercase, min_size=1, max_size=8)
# A word of a name, not a joiner nor a month (a month and a day are a date), capitalized.
word = st.text(string.ascii_lowercase, min_size=2, max_size=8).map(str.capitalize)


@st.composite
def numbers(draw: st.DrawFn) -> str:
    whole = draw(st.integers(0, 10**7))
    sign = draw(st.sampled_from(["", "£", "$", "€"]))
    body = f"{whole:,}" if whole >= 1000 and draw(st.booleans()) else str(whole)
    decimals = draw(st.sampled_from(["", "", "5", "25", "05"]))
    return f"{sign}{body}.{decimals}" if decimals else f"{sign}{body}"


dates = st.dates(datetime.date(1000, 1, 1), datetime.date(9999, 12, 28))


@st.composite
def times(draw: st.DrawFn) -> str:
    minute = draw(st.integers(0, 59))
    if draw(st.booleans()):
        return f"{draw(st.integers(1, 12))}:{minute:02d} {draw(st.sampled_from(['AM', 'PM', 'am', 'pm']))}"
    hour = draw(st.integers(0, 23))
    return f"{hour:02d}:{minute:02d}" if draw(st.booleans()) else f"{hour}:{minute:02d}"


@st.composite
def datetimes(draw: st.DrawFn) -> str:
    day, hour, minute = draw(dates), draw(st.integers(0, 23)), draw(st.integers(0, 59))
    clock = f"{hour:02d}:{minute:02d}" if draw(st.booleans()) else f"{hour}:{minute:02d}"
    return f"{day.isoformat()}{draw(st.sampled_from([' ', 'T']))}{clock}"


KINDS: dict[str, st.SearchStrategy[str]] = {
    NUMBER: numbers(),
    DATE: st.one_of(dates.map(datetime.date.isoformat), dates.map(lambda d: f"{d:%B} {d.day}, {d.year}")),
    TIME: times(),
    DATETIME: datetimes(),
    EMAIL: st.builds(lambda a, b, c: f"{a}.{b}@{c}.com", lower, lower, lower),
    URL: st.builds(lambda a, b: f"https://{a}.org/{b}", lower, lower),
    NAME: st.lists(word, min_size=1, max_size=3).map(" ".join),
}


class Case:
    """A generated value of a kind, in an answer, found there by `values`; and a start state for the edits."""

    def __init__(self, kind: str, text: str, answer: str, value: answers.Value, index: ValueIndex) -> None:
        self.kind, self.text, self.answer, self.value, self.index = kind, text, answer, value, index

    def __repr__(self) -> str:  # what a failing example prints
        return f"Case({self.kind!r}, {self.answer!r}, state={self.index.by_place})"


def _stored(kind: str, text: str) -> Any:
    """The value as a start state holds it (a number as a number)."""
    return answers.normal(NUMBER, text) if kind == NUMBER else text


def same_value(kind: str, text: str) -> list[str]:
    """The value written another way ("01:00" is "1:00 AM"; "2024-05-21" is "May 21, 2024"), as a start state may
    hold it beside the answer's form: an edit must not take it for another value."""
    meant = answers.normal(kind, text)
    if kind == TIME and isinstance(meant, int):
        hour, minute = divmod(meant, 60)
        return [
            f"{hour:02d}:{minute:02d}",
            f"{hour}:{minute:02d}",
            f"{hour % 12 or 12}:{minute:02d} {'AP'[hour >= 12]}M",
        ]
    if kind == DATE:
        day = datetime.date.fromisoformat(meant)
        return [day.isoformat(), f"{day:%B} {day.day}, {day.year}"]
    return []


@st.composite
def cases(draw: st.DrawFn, kind: str) -> Case:
    text = draw(KINDS[kind])
    prefix = draw(st.sampled_from(["", "it is ", "you have "]))
    answer = prefix + text + draw(st.sampled_from(["", " in all.", " today"]))
    found = [v for v in answers.values(answer) if v.start == len(prefix)]
    assert [(v.text, v.kind) for v in found] == [(text, kind)], (answer, answers.values(answer))
    # Half the time the start state holds the value and another of its kind (the edit takes the state's): any,
    # or the same value in another form; else nothing: the edit synthesizes one.
    index = ValueIndex({}, {})
    if draw(st.booleans()):
        forms = [f for f in same_value(kind, text) if f != text]
        other = draw(st.sampled_from(forms) if forms and draw(st.booleans()) else KINDS[kind])
        field = "name" if kind == NAME else "v"  # a name field: where a business's name may be lengthened
        index = index_values({"things": [{field: _stored(kind, text)}, {field: _stored(kind, other)}]})
    return Case(kind, text, answer, found[0], index)


def one_value_of(kind: str, text: str) -> bool:
    return [(v.text, v.kind) for v in answers.values(text)] == [(text, kind)]


def detail(case: Case, how: str, moved: answers.Moved, edited: str) -> dict[str, Any]:
    return {"answer_edit": how, "kind": case.kind, "value": case.text, "to": moved.text, "answer": edited}


def _wrong_edit_holds(case: Case, moved: answers.Moved | None, how: str) -> None:
    assume(moved is not None)
    assert moved is not None
    edited = answers.replace(case.answer, case.value, moved.text)
    assert answers.normal(case.kind, moved.text) != answers.normal(case.kind, case.text)
    assert one_value_of(case.kind, moved.text), answers.values(moved.text)
    if not (how == "superstring" and case.kind == NAME):  # a longer name holds the name as words, by design
        assert not answers.whole_token(case.text, case.kind, edited), edited
    assert answers.confirm(detail(case, how, moved, edited), case.answer, edited) is not None


# Where an edit broke its property (found by these tests, each fixed in grammar/answers.py; kept as the record).
# A name's superstring ("Le Baratin" -> "Le Baratin Express", or "Le Baratin North") still states the name whole
# by `whole_token` (NAME: no word character next to it, and a space is none), so `confirm` finds the edit
# harmless and answer-superstring never makes a cell on a name.
NAME_SUPERSTRING = (
    "grammar/answers.py: whole_token(name, NAME, answer) is True when the superstring holds the name: "
    "superstring(Value('Aa', 'name', 0)) -> 'Aa North', whole_token('Aa', 'name', 'Aa North') -> True, "
    "so confirm() returns None and no name superstring is ever confirmed"
)
# A time with a two-digit hour gets seconds added ("00:00" -> "00:00:30"), which `normal` reads as the same time
# (it drops the seconds): the same value, so `confirm` finds it harmless and such a time has no superstring cell.
TIME_SUPERSTRING = (
    "grammar/answers.py: superstring(Value('00:00', 'time', 0)) -> '00:00:30', and normal('time', '00:00:30') "
    "== normal('time', '00:00') == 0 (seconds dropped): whole_token('00:00', 'time', '00:00:30') is True"
)
# `wrong` takes the start state's first other time by its text, not its meaning: a state that holds "1:00 PM"
# beside "13:00" moves "13:00" to "1:00 PM", the same time. answer-wrong then drops the cell (confirm: the value
# still stands), but answer-hedge makes "13:00 or 1:00 PM" and confirm calls it two candidates: an unsound finding.
TIME_WRONG = (
    "grammar/answers.py: wrong(Value('13:00', 'time', 0)) with a start state holding '13:00' and '1:00 PM' -> "
    "'1:00 PM', and normal('time', '1:00 PM') == normal('time', '13:00') == 780"
)
TIME_HEDGE = (
    "grammar/answers.py: hedge(Value('13:00', 'time', 0)) with a start state holding '13:00' and '1:00 PM' -> "
    "'13:00 or 1:00 PM', which confirm() takes for two candidates although both mean 780 (13:00)"
)
BROKEN: dict[tuple[str, str], str] = {}  # each was fixed in grammar/answers.py; the reasons above say what it was


def kinds(edit: str, leave_out: tuple[str, ...] = ()) -> list[Any]:
    return [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=BROKEN[edit, k])) if (edit, k) in BROKEN else k
        for k in answers.KINDS
        if k not in leave_out
    ]


@pytest.mark.parametrize("kind", kinds("wrong"))
@given(data=st.data())
def test_a_wrong_value_is_another_value_of_the_same_kind(kind: str, data: st.DataObject) -> None:
    case = data.draw(cases(kind))
    _wrong_edit_holds(case, answers.wrong(case.value, case.index, case.answer), "wrong")


# no date contains another; a date-time could only gain seconds, which an answer to the minute does not read
@pytest.mark.parametrize("kind", kinds("superstring", leave_out=(DATE, DATETIME)))
@given(data=st.data())
def test_a_superstring_contains_the_value_and_is_another(kind: str, data: st.DataObject) -> None:
    case = data.draw(cases(kind))
    moved = answers.superstring(case.value, case.index, case.answer)
    assume(moved is not None)
    assert moved is not None and case.text in moved.text
    _wrong_edit_holds(case, moved, "superstring")


def test_there_is_no_superstring_of_a_date() -> None:
    [v] = answers.values("it is 2024-06-03.")
    assert answers.superstring(v, ValueIndex({}, {}), "it is 2024-06-03.") is None


@pytest.mark.parametrize("kind", kinds("hedge"))
@given(data=st.data())
def test_a_hedge_states_both_candidates(kind: str, data: st.DataObject) -> None:
    case = data.draw(cases(kind))
    moved = answers.hedge(case.value, case.index, case.answer)
    assume(moved is not None)
    assert moved is not None
    second = moved.text.removeprefix(f"{case.text} or ")
    assert second != moved.text, moved.text
    edited = answers.replace(case.answer, case.value, moved.text)
    assert answers.whole_token(case.text, case.kind, edited), edited
    assert answers.whole_token(second, case.kind, edited), edited
    assert answers.normal(case.kind, second) != answers.normal(case.kind, case.text)
    assert answers.confirm(detail(case, "hedge", moved, edited), case.answer, edited) is not None


@pytest.mark.parametrize("kind", kinds("form"))
@given(data=st.data(), instruction=st.sampled_from(["How many are there?", "What is it?", "When is it?"]))
def test_an_alternative_form_means_the_same_value(kind: str, data: st.DataObject, instruction: str) -> None:
    case = data.draw(cases(kind))
    for form in answers.alternative_forms(case.value, instruction, computed=True):
        assert form.text != case.text
        edited = answers.replace(case.answer, case.value, form.text)
        assert answers.whole_token(case.text, case.kind, edited), (form, edited)
        if form.variant != "words":  # a count in words has no `normal` of its own: whole_token reads it
            assert one_value_of(case.kind, form.text), (form, answers.values(form.text))
            assert answers.normal(case.kind, form.text) == answers.normal(case.kind, case.text), form


@given(st.sampled_from(answers.KINDS).flatmap(cases))
def test_no_form_where_the_instruction_fixes_one(case: Case) -> None:
    assert answers.alternative_forms(case.value, "How many? Answer in digits, in the format YYYY-MM-DD.") == []


def test_a_count_is_spelled_only_when_asked_how_many_and_computed() -> None:
    [v] = answers.values("you have 3 in all.")
    assert answers.alternative_forms(v, "How many meetings?") == [answers.Form("words", "three")]
    assert answers.alternative_forms(v, "How many meetings?", computed=False) == []
    assert answers.alternative_forms(v, "What is the room number?") == []


# The minimal failing examples the properties above find, as plain cases: each passes once answers.py is fixed.
ONE_PM = index_values({"things": [{"v": "13:00"}, {"v": "1:00 PM"}]})


def _one(answer: str) -> answers.Value:
    [v] = answers.values(answer)
    return v


def test_a_wrong_time_is_not_the_same_time_in_another_form() -> None:
    moved = answers.wrong(_one("13:00"), ONE_PM, "13:00")
    assert moved is None or answers.normal(TIME, moved.text) != answers.normal(TIME, "13:00")


def test_a_hedge_of_a_time_is_not_the_same_time_twice() -> None:
    moved = answers.hedge(_one("13:00"), ONE_PM, "13:00")  # the state's "1:00 PM" is 13:00: not a second candidate
    assert moved is not None
    second = moved.text.removeprefix("13:00 or ")
    assert answers.normal(TIME, second) != answers.normal(TIME, "13:00")
    same = {"answer_edit": "hedge", "kind": TIME, "value": "13:00", "to": "13:00 or 1:00 PM"}
    assert answers.confirm(same, "13:00", "13:00 or 1:00 PM") is None  # one time in two forms is no hedge


def test_a_superstring_of_a_time_is_another_time() -> None:
    moved = answers.superstring(_one("00:00"), ValueIndex({}, {}), "00:00")
    assert moved is None or answers.normal(TIME, moved.text) != answers.normal(TIME, "00:00")


def test_a_superstring_of_a_name_states_the_longer_name() -> None:
    moved = answers.superstring(_one("Aa"), index_values({"shops": [{"name": "Aa"}]}), "Aa")
    assert moved is not None and moved.text != "Aa" and answers.whole_token(moved.text, NAME, moved.text)
    d = {"answer_edit": "superstring", "kind": NAME, "value": "Aa", "to": moved.text}
    assert answers.confirm(d, "Aa", moved.text) is not None


# Judged disputed by the skeptical check (docs/precision.md#the-answer-channel-issue-29), so no longer made: a
# landmark or a country lengthened by a compass word, seconds added to a time an answer gives to the minute, a
# parameter appended to a link that still works.
def test_no_superstring_a_reader_would_still_take_for_the_value() -> None:
    events = index_values({"events": [{"location": "Diamond Head"}], "hotels": [{"address": "1 Rd, United Kingdom"}]})
    assert answers.superstring(_one("Diamond Head"), events, "Diamond Head") is None
    assert answers.superstring(_one("United Kingdom"), events, "United Kingdom") is None
    assert answers.superstring(_one("13:00"), ValueIndex({}, {}), "13:00") is None
    [at] = answers.values("2024-05-21 18:00")
    assert answers.superstring(at, ValueIndex({}, {}), "2024-05-21 18:00") is None
    assert answers.superstring(_one("9:30"), ValueIndex({}, {}), "9:30") == answers.Moved("19:30", synthesized=True)
    [link] = answers.values("https://x.com/reset?token=ab12")
    assert answers.superstring(link, ValueIndex({}, {}), link.text).text == "https://x.com/reset?token=ab121"


# --- the repair's answer check (repair/checks.py AnswerStates), on the same generated answers ------------------


def answer_check(case: Case) -> AnswerStates:
    """The check `verimut repair` writes for this value (synthesis.answer_check's rule): the reference answer's
    values of the kind allowed; a name's rivals, the state's other names where the value sits."""
    rivals = sorted(
        {v for vals in case.index.by_place.values() for v in vals if isinstance(v, str) and v != case.text}
        if case.kind == NAME
        else set()
    )
    return AnswerStates(case.kind, case.text, sorted(set(answers.tokens(case.answer, case.kind))), rivals)


@pytest.mark.parametrize("kind", answers.KINDS)
@given(data=st.data(), instruction=st.sampled_from(["How many are there?", "What is it?", "When is it?"]))
def test_the_answer_check_passes_the_reference_and_its_forms(kind: str, data: st.DataObject, instruction: str) -> None:
    case = data.draw(cases(kind))
    check = answer_check(case)
    assert check.fails_answer(case.answer) is None
    for form in answers.alternative_forms(case.value, instruction, computed=True):
        reworded = answers.replace(case.answer, case.value, form.text)
        assert check.fails_answer(reworded) is None, reworded


@pytest.mark.parametrize("kind", answers.KINDS)
@given(data=st.data(), how=st.sampled_from(["wrong", "superstring", "hedge"]))
def test_the_answer_check_rejects_every_answer_fault(kind: str, data: st.DataObject, how: str) -> None:
    case = data.draw(cases(kind))
    moved = getattr(answers, how)(case.value, case.index, case.answer)
    assume(moved is not None)
    edited = answers.replace(case.answer, case.value, moved.text)
    assume(answers.confirm(detail(case, how, moved, edited), case.answer, edited) is not None)  # a fault, confirmed
    assert answer_check(case).fails_answer(edited) is not None, edited
    assert answer_check(case).fails_answer("") is not None  # answer-drop


def test_a_name_check_reads_no_capitalized_word_as_a_second_candidate() -> None:
    check = AnswerStates(NAME, "Le Baratin", ["Le Baratin"], ["Azabu Ramen", "New Asiaway"])
    assert check.fails_answer("Sure! Le Baratin has the best rating. Try Le Baratin.") is None
    assert check.fails_answer("Le Baratin North") == "the answer does not state the name 'Le Baratin' as a whole name"
    assert check.fails_answer("Le Baratin or Azabu Ramen") == (
        "the answer also states the name 'Azabu Ramen', which the reference answer does not"
    )


def _number(text: str) -> float:
    return float(text.lstrip("£$€").replace(",", ""))


@given(whole=st.integers(0, 10**7), decimals=st.sampled_from(["5", "25", "05", "58", "335"]))
def test_a_synthesized_decimal_move_is_a_whole_unit_of_its_leading_digit(whole: int, decimals: str) -> None:
    # answer-wrong's and answer-superstring's numbers are wrong at any precision a prompt may ask: before, +1 on
    # 851737.58 and a digit appended to 4.33 ("4.335") were the same answer to a reader at the three significant
    # figures or two decimals the prompt asked (docs/precision.md, reasoning-gym: one wrong, three disputed)
    text = f"{whole}.{decimals}"
    value = answers.Value(text, NUMBER, 0)
    unit = 10.0 ** len(str(whole)) / 10 if whole else 10.0 ** -(len(decimals) - len(decimals.lstrip("0")) + 1)
    for how in (answers.wrong, answers.superstring):
        moved = how(value, ValueIndex({}, {}), text)
        assert moved is not None
        assert abs(_number(moved.text) - _number(text)) >= unit * 0.999, (how.__name__, text, moved.text)
