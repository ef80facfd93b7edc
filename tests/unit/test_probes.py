"""The answer probes (grammar/probes.py): each family's declared examples, run (as cosmic-ray runs its operators'),
and the rules every probe's edits keep, for every answer (Hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verimut.core.run import AnswerChannel, Run
from verimut.grammar import answers, probes
from verimut.grammar.faults import FAMILIES, FaultContext, Refusal, of_grammar, spec_of
from verimut.grammar.pinned import index_values

PROBES = [f for f in of_grammar("answer") if FAMILIES.get(f).__module__ == probes.__name__]


def _ctx(slot: str, others: tuple[str, ...], prompt: str = "What is 3 + 4?") -> FaultContext:
    return FaultContext(
        writes=(),
        outputs=(),
        instruction=prompt,
        values=index_values({}),
        non_idempotent=(),
        channel=AnswerChannel("a reward function's completion", slot=slot),
        other_answers=others,
    )


def _edits(family: str, answer: str, slot: str = "", others: tuple[str, ...] = (), prompt: str = "What is 3 + 4?"):
    channel = AnswerChannel("x", slot=slot)
    return FAMILIES.get(family)(Run((), channel.fill(answer)), _ctx(slot, others, prompt))


def test_every_probe_declares_examples():
    assert set(PROBES) == set(probes.EXAMPLES), "a probe family without examples, or examples of no family"


@pytest.mark.parametrize("family", sorted(probes.EXAMPLES))
def test_each_family_s_examples(family):
    for ex in probes.EXAMPLES[family]:
        edits = _edits(family, ex.answer, ex.slot, ex.others)
        assert not isinstance(edits, Refusal), (family, ex.answer, edits)
        chosen = {e.variant: e for e in edits}
        assert ex.variant in chosen, (family, ex.variant, list(chosen))
        edit = chosen[ex.variant]
        assert ex.says in edit.run.answer, (family, ex.variant, edit.run.answer[:200])
        reference = AnswerChannel("x", slot=ex.slot).fill(ex.answer)
        if spec_of(family).is_alternative:
            # the reference completion kept whole (a sentence or the format named around it), or its slot's answer
            # in another form that means the same
            inner = AnswerChannel("x", slot=ex.slot).inner(edit.run.answer)
            assert reference in edit.run.answer or (inner is not None and probes.same(inner, ex.answer))
        else:
            assert answers.confirm(edit.detail, reference, edit.run.answer) is not None, (family, ex.variant)


def test_meaning_reads_numbers_by_value_and_text_without_case_or_spaces():
    assert probes.same("0.5", "1/2") and probes.same("7", "7.0") and probes.same("1,050", "1050")
    assert probes.same("B A C", "bac") and probes.same("Paris.", "paris")
    assert not probes.same("NaN", "7") and not probes.same("7.9", "7") and not probes.same("17", "7")


def test_a_refusal_names_why():
    refused = _edits("answer-special-number", "Paris")
    assert isinstance(refused, Refusal) and "no number" in refused.reason
    assert isinstance(_edits("alt-tag-prose", "7"), Refusal)  # no paired tag to name
    assert isinstance(_edits("answer-other", "Paris"), Refusal)  # no other answer, and no number


_answers = st.one_of(
    st.integers(-10_000, 10_000).map(str),
    st.decimals(-1000, 1000, places=3, allow_nan=False, allow_infinity=False).map(str),
    st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="{}"), min_size=1, max_size=12),
)


@given(answer=_answers, other=_answers, slot=st.sampled_from(["", "<answer>{answer}</answer>", "\\boxed{{answer}}"]))
def test_every_fault_edit_is_confirmed_and_every_alternative_means_the_same(answer, other, slot):
    reference = AnswerChannel("x", slot=slot).fill(answer)
    for family in PROBES:
        edits = _edits(family, answer, slot, (other,))
        if isinstance(edits, Refusal):
            continue
        for edit in edits:
            assert edit.run.answer != reference, (family, edit.variant)
            if spec_of(family).is_alternative:
                # the slot's text, or the whole completion, is the reference answer in another form
                inner = AnswerChannel("x", slot=slot).inner(edit.run.answer)
                if edit.variant in probes.forms_of(answer, slot, "What is 3 + 4?"):
                    assert inner is not None and probes.same(inner, answer), (family, edit.variant, inner)
            else:
                why = answers.confirm(edit.detail, reference, edit.run.answer)
                assert why is not None, (family, edit.variant, answer, edit.run.answer[:80])


@pytest.mark.parametrize(
    ("answer", "lowered"),
    [
        ("Paris", "paris"),
        ("True", "true"),
        ("New York", "new york"),
        ("A# B#", None),
        ("LURD", None),
        ("olleh", None),
        # a decoded sentence, a list of words to reverse: the case is part of the answer
        ("In fact, one of them wanted to revive painting.", None),
        ("Gutenberg, pleasure, it", None),
    ],
)
def test_another_case_is_the_same_answer_only_for_words_as_prose_writes_them(answer, lowered):
    # symbols, moves whose case means a push, text already lower case (a program's output): there case is the answer
    assert probes.forms_of(answer, "<answer>{answer}</answer>", "What is it?").get("case") == lowered
    assert "case" not in probes.forms_of(answer, "<answer>{answer}</answer>", "Answer in upper case.")


def test_no_form_adds_text_the_format_does_not_allow():
    # judged disputed on reasoning-gym: a final period, "6.0" for 6, "\r\n" between a grid's rows
    edits = _edits("alt-format", "1 2\n3 4", "<answer>{answer}</answer>")
    assert not isinstance(edits, Refusal)
    assert all("\r" not in e.run.answer for e in edits), [e.variant for e in edits]
    assert "final-period" not in probes.forms_of("7", "<answer>{answer}</answer>", "What is 3 + 4?")
    assert "decimal" not in probes.forms_of("6", "<answer>{answer}</answer>", "How many?")


@pytest.mark.parametrize(
    ("answer", "prompt"),
    [
        ("False", "Return True if the strings are isomorphic, or False otherwise."),
        ("Peng", 'Your output should be one of the following: "Peng", "Chi", or "Pass".'),
        ("Yes", "Does it follow? (Answer Yes or No)"),
    ],
)
def test_a_word_the_prompt_writes_keeps_its_case(answer, prompt):
    # the prompt spells out the form it asks for: a reward that refuses "false" for "False" is no false reject
    assert "case" not in probes.forms_of(answer, "<answer>{answer}</answer>", prompt)
    assert probes.forms_of(answer, "<answer>{answer}</answer>", "What is it?").get("case") == answer.lower()
