"""WebArena-Verified's worker side, the parts that need no package: verimut's synthesized evidence
(webarena_evidence.py) and how a write reads as a site change (webarena_effects.py). Standard library only, so
these run in verimut's own environment; tests/benchmarks/webarena runs them against the package itself."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verimut.adapters.webarena import WORKER_SIDE

sys.path.insert(0, str(WORKER_SIDE))
import webarena_effects as effects
import webarena_evidence as evidence


@pytest.mark.parametrize(
    "pattern",
    [
        r"^__SHOPPING__/[a-z0-9-]*(?:guard|mouth|teeth)[a-z0-9-]*\.html$",
        r"^.*MIT.*License.*$",
        r"^__GITLAB__/api/v4/projects/\d+/members$",
        r"^.*(?=.*laundry)(?=.*detergent).* has been added to your wish list.*$",
        r"^reply_to_submission_\d+\[comment\]$",
        r"^.*swatchtext%5Bvalue%5D%5Boption_\d+%5D%5B0%5D=Brown.*$",
    ],
)
def test_a_patterns_example_matches_it(pattern):
    assert re.search(pattern, evidence.example(pattern))
    assert re.search(pattern, evidence.example(pattern, filler="1"))


@given(st.from_regex(r"\^[a-z_/]{1,12}(\\d\+|\.\*|\[a-z\]\+|\(a\|b\))[a-z/]{0,6}\$", fullmatch=True))
def test_every_generated_example_matches_its_pattern(pattern):
    assert re.search(pattern, evidence.example(pattern))


def test_a_url_pattern_that_names_no_site_is_put_on_the_tasks_first_site():
    assert evidence.site_url(r"^.*/routed-car/route/v1/.*/.*$", ["map"]) == "__MAP__/1/routed-car/route/v1/1/1"


def test_jsonpath_keys_become_the_body_they_describe():
    assert evidence.nested(
        {"$.issue.assignee_ids": [2264]}, {"properties": {"$.issue.assignee_ids": {"type": "array"}}}
    ) == {"issue": {"assignee_ids": [2264]}}
    assert evidence.nested({"$.items[0].name": "Beyond Meat"}) == {"items": [{"name": "Beyond Meat"}]}
    two = evidence.nested({"$['matrix'][?(@.newProduct == 1)].attributes": ["size: s", "size: m"]})
    assert two == {"matrix": [{"newProduct": 1, "attributes": "size: s"}, {"newProduct": 1, "attributes": "size: m"}]}


def test_alternatives_give_their_first_and_arrays_stay_arrays():
    assert evidence.concrete(["a", "b"], {"type": "string"}) == "a"
    assert evidence.concrete(["a", "b"], {"type": "array", "items": {"type": "string"}}) == ["a", "b"]
    assert evidence.concrete({"names": ["x", "y"]}, {"properties": {"names": {"type": "array"}}}) == {
        "names": ["x", "y"]
    }


@pytest.mark.parametrize(
    ("method", "url", "body", "kind"),
    [
        ("POST", "__GITLAB__/primer/design/notes", {"note": "lgtm"}, "create"),
        ("POST", "__GITLAB__/api/v4/projects/184/members", {"user_id": 5}, "create"),
        ("PUT", "__GITLAB__/a11yproject/a11yproject.com/-/issues/1478.json", {"issue": {}}, "update"),
        ("POST", "__SHOPPING_ADMIN__/catalog/product/save/id/120/type/simple/store/0/set/4/back/edit", {}, "update"),
        ("POST", "__SHOPPING_ADMIN__/catalog/product/save/type/simple/store/0/set/4/back/edit", {}, "create"),
        ("POST", "__SHOPPING_ADMIN__/cms/page/save/back/edit", {"page_id": "3"}, "update"),
        ("POST", "__SHOPPING_ADMIN__/sales_rule/promo_quote/save", {"name": "x"}, "create"),
        ("POST", "__GITLAB__/kkroening/ffmpeg-python/toggle_star.json", None, "toggle"),
        ("POST", "__SHOPPING_ADMIN__/review/product/delete/id/93/", None, "remove"),
        ("POST", "__REDDIT__/user/MarvelsGrantMan136/edit_biography", {"b": "x"}, "update"),
        ("POST", "__REDDIT__/sv/115139.json", {"choice": "1"}, "update"),
        ("POST", "http://127.0.0.1/dummy_bin", {"comment": "x"}, "update"),
        ("POST", "__REDDIT__/f/books/subscribe.json", None, "update"),
        ("POST", "__SHOPPING__/wishlist/index/add/", {"product": "1", "qty": "1"}, "update"),
        ("POST", "__SHOPPING__/checkout/cart/add/uenc/1/product/14854", {"item": "14854", "qty": "1"}, "create"),
    ],
)
def test_how_a_write_reads(method, url, body, kind):
    assert effects.kind(method, url, body) == kind


def _state(*requests):
    return effects.state([{"status": 200, **r} for r in requests], None)


NOTE = {"method": "POST", "url": "__GITLAB__/primer/design/notes", "post_data": {"note": "lgtm"}}
PRICE = {"method": "POST", "url": "__SHOPPING_ADMIN__/catalog/product/save/id/1/back/edit", "post_data": {"p": "47"}}
STAR = {"method": "POST", "url": "__GITLAB__/a/b/toggle_star.json"}


def test_an_update_made_twice_or_wrong_then_right_ends_where_one_right_update_does():
    assert _state(PRICE, PRICE) == _state(PRICE)
    assert _state({**PRICE, "post_data": {"p": "48"}}, PRICE) == _state(PRICE)


def test_a_create_made_twice_and_a_toggle_made_twice_do_not():
    assert _state(NOTE, NOTE) != _state(NOTE)
    assert _state(STAR, STAR) != _state(STAR)
    [record] = _state(STAR, STAR)["records"].values()
    assert record["fields"] == {"toggled": False}  # starred, then unstarred


def test_a_refused_request_and_a_read_change_nothing():
    assert _state({**NOTE, "status": 409}) == _state()
    assert _state({"method": "GET", "url": "__GITLAB__/dashboard/todos"}) == _state()
    assert _state({"method": "POST", "url": "__GITLAB__/api/graphql", "post_data": {"query": "{ issues }"}}) == _state()
    assert (
        _state({"method": "POST", "url": "__GITLAB__/api/graphql", "post_data": {"query": "mutation {}"}}) != _state()
    )


def test_a_site_keeps_one_member_per_user_and_one_product_per_name_but_any_number_of_comments():
    members = "__GITLAB__/api/v4/projects/184/members"
    assert effects.identity("POST", members, {"user_id": 5, "access_level": 30}) & effects.identity(
        "POST", members, {"user_id": 5, "access_level": 40}
    )
    new = "__SHOPPING_ADMIN__/catalog/product/save/type/simple/store/0/set/4/back/edit"
    assert effects.identity("POST", new, {"product[name]": "Mat", "qty": "42"}) & effects.identity(
        "POST", new, {"product[name]": "Mat", "qty": "43"}
    )
    projects = "__GITLAB__/projects"  # one path is one project, whatever its name
    assert effects.identity("POST", projects, {"project[name]": "a-2", "project[path]": "a"}) & effects.identity(
        "POST", projects, {"project[name]": "a", "project[path]": "a"}
    )
    assert effects.identity("POST", NOTE["url"], NOTE["post_data"]) is None


def test_two_evaluators_that_grade_the_last_request_to_one_url_and_want_different_ones_clash():
    spec = {"evaluator": "NetworkEventEvaluator", "expected": {"url": "__GITLAB__/m", "http_method": "POST"}}
    task = {"eval": [{"evaluator": "AgentResponseEvaluator", "expected": {"task_type": "mutate"}}, spec, spec]}
    assert "last_event_only" in (effects.last_event_clash(task) or "")
    task["eval"][2] = {**spec, "last_event_only": False}
    assert effects.last_event_clash(task) is None
