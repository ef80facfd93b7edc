"""Form benchmarks' fault families and census, pure (WorkArena itself: tests/benchmarks/workarena)."""

from __future__ import annotations

import json

import msgspec

from verimut.core import forms
from verimut.core.run import Action, Run
from verimut.engine import pipeline
from verimut.grammar.faults import FAMILIES, FaultContext, Refusal, of_grammar
from verimut.grammar.pinned import ValueIndex

FACTS = forms.FormFacts(
    "incident",
    ["short_description", "impact"],
    [
        forms.FormField("short_description", "Short description", "string", "", "disk"),
        forms.FormField("impact", "Impact", "choice", "3 - Low", "3 - Low"),
        forms.FormField("urgency", "Urgency", "choice", "3 - Low", "3 - Low"),
        forms.FormField("description", "Description", "string", "", "grinding"),
        forms.FormField("category", "Category", "choice", "Inquiry / Help", "Hardware"),
    ],
)
RUN = Run(
    (
        Action(forms.SET_FIELD, {"field": "short_description", "value": "disk"}),
        Action(forms.SET_FIELD, {"field": "impact", "value": "3 - Low"}),
        Action(forms.SUBMIT),
    ),
    "done",
)


def _ctx(facts: forms.FormFacts | None = FACTS) -> FaultContext:
    n = len(RUN.actions)
    return FaultContext((True,) * n, ("",) * n, "", ValueIndex({}, {}), (None,) * n, facts)


def test_the_census_prefers_choice_fields_and_skips_values_equal_to_the_default():
    assert [c.field for c in forms.extra_field_candidates(FACTS)] == ["category", "description"]
    assert forms.divergent_fields(FACTS) == ["short_description"]


def test_a_default_that_differs_between_two_fresh_forms_is_generated_and_never_an_extra_field():
    other = msgspec.structs.replace(FACTS.fields[4], default="Network")
    again = msgspec.structs.replace(FACTS, fields=[*FACTS.fields[:4], other])
    facts = forms.settled(FACTS, again)
    assert facts.field("category").default is None and facts.field("impact").default == "3 - Low"
    assert [c.field for c in forms.extra_field_candidates(facts)] == ["description"]


def test_the_form_operators_edit_the_steps_as_stated():
    apart, together = FAMILIES["extra-field"](RUN, _ctx())
    assert [a.name for a in apart.run.actions] == ["set_field", "set_field", "set_field", "submit"]
    assert apart.run.actions[2].args == {"field": "category", "value": "Hardware"}
    assert [a.name for a in together.run.actions] == ["set_field", "set_field", "set_field_then_submit"]
    [omit] = FAMILIES["omit-divergent"](RUN, _ctx())
    assert omit.variant == "short_description" and len(omit.run.actions) == 2
    [nosub] = FAMILIES["no-submit"](RUN, _ctx())
    assert forms.SUBMIT not in [a.name for a in nosub.run.actions]
    assert isinstance(FAMILIES["extra-field"](RUN, _ctx(None)), Refusal)


def test_each_benchmark_is_audited_with_its_own_grammar_by_default():
    form = ["claim-only", "wrong-value", "null-run", "omit-field", "omit-divergent", "no-submit", "extra-field"]
    assert of_grammar("form") == form
    faults = ["claim-only", "omit", "partial", "wrong-value", "extra", "extra-ni", "extra-oos"]
    alternatives = ["alt-reads", "alt-order", "alt-text", "alt-idem"]
    answer = ["answer-drop", "answer-wrong", "answer-superstring", "answer-hedge", "null-run", "alt-answer"]
    assert of_grammar("api") == [*faults, *alternatives, *answer]
    assert pipeline.select_families((), "api") == of_grammar("api")


def test_form_facts_round_trip_through_the_manifest_encoding():
    again = msgspec.json.decode(msgspec.json.encode(FACTS), type=forms.FormFacts)
    assert again == FACTS and json.loads(msgspec.json.encode(FACTS))["table"] == "incident"


def test_wrong_value_on_a_form_moves_each_field_whose_adapter_names_another_legal_value():
    # A catalog task (WorkArena's Order...Task): quantity and a radio variable, each with another legal value.
    facts = forms.FormFacts(
        "sc_req_item",
        ["quantity", "Choose the colour"],
        [
            forms.FormField("quantity", "Quantity", "integer", "1", "2", "3"),
            forms.FormField("Choose the colour", "Choose the colour", "radio", "", "Pink", "Space Grey"),
        ],
    )
    run = Run(
        (
            Action(forms.SET_FIELD, {"field": "quantity", "value": "2"}),
            Action(forms.SET_FIELD, {"field": "Choose the colour", "value": "Pink"}),
            Action(forms.SUBMIT),
        ),
        "done",
    )
    n = len(run.actions)
    ctx = FaultContext((True,) * n, ("",) * n, "", ValueIndex({}, {}), (None,) * n, facts)
    quantity, colour = FAMILIES["wrong-value"](run, ctx)
    assert quantity.variant == "quantity" and quantity.run.actions[0].args == {"field": "quantity", "value": "3"}
    assert colour.run.actions[1].args["value"] == "Space Grey" and colour.run.actions[2] == run.actions[2]
    # A form whose adapter names no other value (the incident form): refused, with the reason.
    refused = FAMILIES["wrong-value"](RUN, _ctx())
    assert isinstance(refused, Refusal) and "no other legal value" in refused.reason


def test_a_field_without_another_value_is_encoded_as_before():
    assert "other" not in json.loads(msgspec.json.encode(FACTS.fields[0]))
