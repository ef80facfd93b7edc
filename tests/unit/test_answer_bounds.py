"""Answer parsing ends, whatever the answer (issue 43, item 2): values are found in linear time, the answer families
look at a bounded number of them, an answer longer than answers.PARSED is not parsed, and a family that still runs
away stops the manifest build in one line naming its task.

Each bound is asserted on structure (what is called, how often, what is refused); the one timed check is a
generous limit that only catches a hang (the quadratic pattern took minutes on its input; it now takes
milliseconds). Speed figures live in bench/.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests import answerbench

from verimut.core import deadline
from verimut.core.benchmark import resolve
from verimut.core.errors import AuditError
from verimut.core.run import Action, AnswerChannel, Run
from verimut.engine import manifest
from verimut.grammar import answers, faults
from verimut.grammar.faults import FAMILIES, FaultContext, Refusal
from verimut.grammar.pinned import ValueIndex

CHANNEL = AnswerChannel("the run's final answer")


def ctx(instruction: str = "How much?") -> FaultContext:
    return FaultContext((False,), ("",), instruction, ValueIndex({}, {}), (None,), channel=CHANNEL)


def said(answer: str, instruction: str = "How much?") -> Any:
    return faults._said(Run((Action("read"),), answer), ctx(instruction), answer)


def test_a_long_word_is_parsed_in_linear_time():
    # The e-mail pattern, tried at every character of a long word, scanned to the word's end each time:
    # 20,000 characters took 1.2 s, and 200,000 take minutes. Linear, they take milliseconds.
    with deadline.limited(30):
        assert answers.values("x" * 200_000) == []
        assert answers.values("a." * 100_000) == []
        assert answers.values("x" * 200_000 + " 3") == [answers.Value("3", answers.NUMBER, 200_001)]
        assert [v.text for v in answers.values("y" * 100_000 + " bob@example.com")] == ["bob@example.com"]


def test_an_e_mail_address_is_still_found_whole():
    found = answers.values("write to a.b+c@mail.example.org, or -x@y.io, or call 0123.")
    assert [(v.text, v.kind) for v in found] == [
        ("a.b+c@mail.example.org", answers.EMAIL),
        ("-x@y.io", answers.EMAIL),
        ("0123", answers.NUMBER),
    ]


def test_the_families_look_at_a_bounded_number_of_the_answers_values(monkeypatch: pytest.MonkeyPatch):
    calls: list[str] = []
    real = answers.asked

    def counted(v: answers.Value, instruction: str, index: ValueIndex) -> bool:
        calls.append(v.text)
        return real(v, instruction, index)

    monkeypatch.setattr(answers, "asked", counted)
    many = " ".join(str(1000 + i) for i in range(8000))
    found = said(many)
    assert isinstance(found, list) and [s.value.text for s in found] == [str(1000 + i) for i in range(8)]
    assert len(calls) == faults.ANSWER_VALUES  # was 8,000 (and a quadratic de-duplication: 47 s)
    calls.clear()
    monkeypatch.setattr(answers, "asked", lambda *a: calls.append(a[0].text) is not None)  # nothing is asked for
    refused = said(many)
    assert isinstance(refused, Refusal) and "1000 (not asked for), 1001 (not asked for)" in refused.reason
    assert len(calls) == faults.ANSWER_LOOKED


def test_a_value_said_twice_is_looked_at_once(monkeypatch: pytest.MonkeyPatch):
    calls: list[str] = []
    monkeypatch.setattr(answers, "asked", lambda v, *a: calls.append(v.text) is None)
    found = said("it is 1200, yes 1200, and 1200 again; 1300 too.")
    assert isinstance(found, list) and [s.value.text for s in found] == ["1200", "1300"]
    assert calls == ["1200", "1300"]


@pytest.mark.parametrize("family", ["answer-drop", "answer-wrong", "answer-superstring", "answer-hedge", "alt-answer"])
def test_an_answer_longer_than_the_cap_is_refused_unparsed(family: str, monkeypatch: pytest.MonkeyPatch):
    def never(answer: str) -> list[answers.Value]:
        raise AssertionError("parsed an answer over the cap")

    monkeypatch.setattr(answers, "values", never)
    answer = "It is 3. " + "x" * answers.PARSED
    result = FAMILIES[family](Run((Action("read"),), answer), ctx())
    assert result == Refusal(
        f"the reference answer is {len(answer):,} characters: the answer families parse at most {answers.PARSED:,}"
    )


def test_a_family_that_runs_away_stops_the_manifest_naming_its_task(monkeypatch: pytest.MonkeyPatch):
    name = "test-runs-away"

    @faults.family(name)
    def runs_away(run: Run, ctx: FaultContext) -> list[faults.Edit] | Refusal:
        while True:
            pass

    monkeypatch.setattr(manifest, "FAMILY_SECONDS", 0.5)
    try:
        with pytest.raises(AuditError, match=r"^task 'q/count': the test-runs-away family did not finish .* 0\.5 s"):
            manifest.build(resolve(answerbench.containment), ["q/count"], [name])
    finally:
        FAMILIES.pop(name, None)


def test_the_limit_leaves_no_timer_behind():
    import signal

    with deadline.limited(5):
        pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    with pytest.raises(deadline.Overrun), deadline.limited(0.05):
        while True:
            pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
