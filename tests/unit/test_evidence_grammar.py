"""The evidence grammar (grammar/evidence.py): each family on a small WebArena-shaped run, and the value moves'
rules for every input (a near miss lies beyond the tolerance the package documents; a wrong value differs)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from verimut.core.run import Action, Run
from verimut.grammar import evidence
from verimut.grammar.faults import FAMILIES, FaultContext, Refusal, of_grammar
from verimut.grammar.pinned import ValueIndex

POST = Action(
    "POST",
    {"url": "__GITLAB__/primer/design/notes", "status": 200, "post_data": {"note": "lgtm"}, "pinned": ["note"]},
)
START = Action("GET", {"url": "__GITLAB__", "status": 200})


def respond(schema: dict | None = None, **kw) -> Action:
    response = {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": None, **kw}
    return Action(evidence.RESPOND, {"response": response, "results_schema": schema or {}})


def said(edit) -> dict:
    return edit.run.actions[-1].args["response"]


def ctx(run: Run, instruction: str = 'Post "lgtm" on the MR') -> FaultContext:
    writes = tuple(a.name == "POST" for a in run.actions)
    reads = tuple(a.name == "GET" for a in run.actions)
    return FaultContext(
        writes=writes,
        outputs=tuple("" for _ in run.actions),
        instruction=instruction,
        values=ValueIndex({}, {}),
        non_idempotent=tuple(None for _ in run.actions),
        reads=reads,
    )


def edits(name: str, run: Run) -> list:
    got = FAMILIES[name](run, ctx(run))
    assert not isinstance(got, Refusal), got
    return got


def test_the_evidence_grammar_has_its_own_families_and_the_generic_ones_that_carry_over():
    names = of_grammar("evidence")
    for own in ("wrong-first", "wrong-post", "oos-before", "answer-status", "data-wrong", "data-near-miss"):
        assert own in names
    for generic in ("claim-only", "omit", "extra", "extra-ni", "extra-oos", "null-run", "alt-reads", "alt-order"):
        assert generic in names
    assert "answer-drop" not in names  # the answer is the response action, not a text channel
    assert not set(of_grammar("api")) & {"wrong-first", "data-wrong", "answer-status"}


def test_wrong_first_puts_a_wrong_copy_of_the_write_before_it_and_keeps_the_right_one():
    run = Run((START, POST, respond(task_type="mutate")))
    [edit] = edits("wrong-first", run)
    assert [a.args.get("post_data") for a in edit.run.actions[1:3]] == [{"note": "lgtm-2"}, {"note": "lgtm"}]
    assert edit.detail["field"] == "note"


def test_wrong_post_varies_only_the_fields_the_task_pins():
    unpinned = Action("POST", {**POST.args, "pinned": []})
    assert isinstance(FAMILIES["wrong-post"](Run((unpinned,)), ctx(Run((unpinned,)))), Refusal)
    [edit] = edits("wrong-post", Run((POST,)))
    assert edit.run.actions[0].args["post_data"] == {"note": "lgtm-2"}


def test_a_field_pinned_inside_a_json_body_is_varied_where_it_sits():
    note = Action(
        "POST",
        {
            "url": "__GITLAB__/p/notes",
            "post_data": {"note": {"note": "lgtm", "type": "MR"}},
            "pinned": [["note", "note"]],
        },
    )
    [edit] = edits("wrong-first", Run((note,)))
    assert edit.run.actions[0].args["post_data"] == {"note": {"note": "lgtm-2", "type": "MR"}}
    assert edit.run.actions[1] == note


def test_answer_status_moves_success_to_each_error_and_an_error_back_to_success():
    done = edits("answer-status", Run((START, respond())))
    assert {said(e)["status"] for e in done} <= set(evidence.STATUSES) - {"SUCCESS"}
    failed = edits("answer-status", Run((START, respond(status="NOT_FOUND_ERROR"))))
    assert "SUCCESS" in {said(e)["status"] for e in failed}


def test_data_families_edit_the_retrieved_values_and_keep_the_rest_of_the_response():
    run = Run((START, respond(retrieved_data=[3, "Quest Band"])))
    wrong = edits("data-wrong", run)
    assert said(wrong[0])["retrieved_data"] == [4, "Quest Band"]
    sup = edits("data-superstring", run)
    assert [said(e)["retrieved_data"] for e in sup] == [[13, "Quest Band"], [3, "Quest Band 2"]]
    hedge = said(edits("data-hedge", run)[0])["retrieved_data"]
    assert hedge == ["3 or 4", "Quest Band"]
    [extra] = edits("data-extra-item", run)
    assert said(extra)["retrieved_data"] == [3, "Quest Band", "Quest Band 2"]
    assert extra.run.actions[-1].args["results_schema"] == {}  # the schema rides along, untouched
    assert isinstance(FAMILIES["data-near-miss"](run, ctx(run)), Refusal)  # no distance, duration, date or amount


def test_values_the_package_compares_fuzzily_by_design_are_not_edited_as_text():
    schema = {"type": "array", "items": {"type": "string", "format": "location-name"}}
    run = Run((START, respond(schema, retrieved_data=["Back Bar Grill"])))
    for name in ("data-superstring", "data-hedge", "data-wrong"):
        assert isinstance(FAMILIES[name](run, ctx(run)), Refusal)


def test_a_currency_value_gets_a_near_miss_past_its_tolerance():
    schema = {"type": "array", "items": {"type": "number", "format": "currency"}}
    [edit] = edits("data-near-miss", Run((START, respond(schema, retrieved_data=[25.16]))))
    assert said(edit)["retrieved_data"] == [25.66]


def test_a_response_without_data_is_refused_by_the_data_families():
    run = Run((START, POST, respond(task_type="mutate")))
    for name in ("data-wrong", "data-superstring", "data-hedge", "data-extra-item", "data-near-miss"):
        assert isinstance(FAMILIES[name](run, ctx(run)), Refusal)


_KM = re.compile(r"^([\d.]+)km$")


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from([("m", 1.0), ("km", 1000.0), ("mi", 1609.344)]))
def test_a_near_miss_distance_lies_beyond_the_documented_tolerance(n, unit):
    suffix, size = unit
    moved, _ = evidence.near_miss(f"{n}{suffix}")
    got, metres = float(moved.removesuffix(suffix)) * size, n * size
    assert abs(got - metres) > max(10.0, 0.02 * metres) - 1e-6 * metres


@given(st.integers(min_value=0, max_value=30), st.integers(min_value=1, max_value=59))
def test_a_near_miss_duration_lies_beyond_the_documented_tolerance(hours, minutes):
    total = hours * 60 + minutes
    moved, _ = evidence.near_miss(f"{hours}h {minutes}min" if hours else f"{minutes}min")
    m = re.fullmatch(r"(?:(\d+)h )?(\d+)min", moved)
    assert m is not None
    later = int(m.group(1) or 0) * 60 + int(m.group(2))
    assert later - total > max(3, 0.10 * total)


@given(st.decimals(min_value=0, max_value=10**6, places=2))
def test_a_near_miss_amount_lies_beyond_the_documented_tolerance(amount):
    moved, _ = evidence.near_miss(f"${amount}")
    assert abs(float(moved.strip("$").replace(",", "")) - float(amount)) > 0.1


@given(st.one_of(st.integers(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False, width=32)))
def test_a_wrong_value_always_differs(value):
    moved = evidence.wrong(value)
    assert moved is not None and moved[0] != value


@given(st.integers(min_value=0, max_value=30), st.integers(min_value=1, max_value=59))
def test_a_wrong_duration_lies_well_beyond_the_documented_tolerance(hours, minutes):
    total = hours * 60 + minutes
    moved, _ = evidence.wrong(f"{hours}h {minutes}min" if hours else f"{minutes}min")
    m = re.fullmatch(r"(?:(\d+)h )?(\d+)min", moved)
    assert m is not None
    assert int(m.group(1) or 0) * 60 + int(m.group(2)) - total > max(3, 0.10 * total)


@given(st.integers(min_value=1, max_value=10**6))
def test_a_wrong_distance_lies_well_beyond_the_documented_tolerance(metres):
    moved, _ = evidence.wrong(f"{metres}m")
    assert float(moved.removesuffix("m")) - metres > max(10.0, 0.02 * metres)


def test_only_a_value_the_instruction_states_is_moved():
    fields = {
        "submission[forum]": "10042",
        "qty": "2",
        "simple_action": "by_percent",
        "title": "is car necessary",
        "media": "url",
    }
    post = Action("POST", {"url": "__REDDIT__/submit", "post_data": fields, "pinned": list(fields)})
    run = Run((post,))
    got = FAMILIES["wrong-post"](run, ctx(run, "Buy 2 and post 'is car necessary' with the url, at 45% off"))
    assert [e.detail["field"] for e in got] == ["qty", "title"]  # an id, an option code: read off the site
