"""WebArena-Verified's evidence: verimut's own reference runs, synthesized from each task's expected values.

Runs in WebArena-Verified's own environment (.venv-webarena; the package pins pydantic 2.12.0), so this file
imports only the standard library: it reads the task's `eval` block as plain JSON and writes what a browser
would have left behind, a HAR entry per request and the agent's final response.

THESE ARE NOT RECORDED AGENT RUNS. No GitLab, shopping, reddit, map or wikipedia site runs here: a reference
is the evidence a correct run would leave (each expected request, with the expected method, URL, query, post
data and status), made from the task's own expected values; where the task lists alternatives, the first; where
it gives a pattern, the shortest text the pattern matches. The audit tests the evaluator on evidence, not what a
site would have done with it.
"""

from __future__ import annotations

import itertools
import json
import re
import urllib.parse
from typing import Any

try:  # Python 3.11+: the parser moved under re
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

# Any local address will do offline: the evaluator maps each placeholder to these and back.
SITES = {
    "__GITLAB__": "http://gitlab.verimut.local:8023",
    "__SHOPPING__": "http://shopping.verimut.local:7770",
    "__SHOPPING_ADMIN__": "http://shopping-admin.verimut.local:7780/admin",
    "__REDDIT__": "http://reddit.verimut.local:9999",
    "__MAP__": "http://map.verimut.local:3000",
    "__WIKIPEDIA__": "http://wikipedia.verimut.local:8888",
    "__HOMEPAGE__": "http://homepage.verimut.local:4399",
}
PLACEHOLDER = re.compile(r"__(GITLAB|SHOPPING_ADMIN|SHOPPING|REDDIT|MAP|WIKIPEDIA|HOMEPAGE)__")
NAVIGATION_HEADERS = (
    ("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
    ("sec-fetch-dest", "document"),
    ("sec-fetch-mode", "navigate"),
    ("sec-fetch-user", "?1"),
)


class Unsynthesizable(Exception):
    """A task whose reference evidence cannot be made from its expected values (the reason is the message)."""


def render(text: str) -> str:
    """A placeholder URL (`__GITLAB__/a/b`) as the local address the evaluator is configured with."""
    return PLACEHOLDER.sub(lambda m: SITES[m.group(0)], text)


# -- the shortest text a pattern matches ------------------------------------------------------------------
_CATEGORY_CHAR = {
    "CATEGORY_DIGIT": "1",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": "-",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": "a",
}


def is_pattern(text: str) -> bool:
    """The package's own test: an expected string that starts with ^ and ends with $ is a regular expression."""
    return text.startswith("^") and text.endswith("$")


def example(pattern: str, filler: str = "") -> str:
    """A short text `pattern` matches: each repeat at its minimum (one for `+`), the first branch, the first
    member of a set; `filler` for an optional run of any character (in a URL, a path segment such as "1",
    so that `/issues/.*` is a page, not a folder). Checked against the pattern, so a text that does not match
    is never handed on."""
    text = _emit(sre_parse.parse(pattern), filler)
    if not re.search(pattern, text):
        raise Unsynthesizable(f"no example found for the pattern {pattern!r}")
    return text


def _in_set(items: list[Any]) -> str:
    negate = any(op == sre_constants.NEGATE for op, _ in items)
    if negate:
        banned = "".join(_emit([(op, av)]) for op, av in items if op != sre_constants.NEGATE)
        return next(c for c in "a1-_ x" if c not in banned)
    op, av = items[0]
    if op == sre_constants.LITERAL:
        return chr(av)
    if op == sre_constants.RANGE:
        return chr(av[0])
    if op == sre_constants.CATEGORY:
        return _CATEGORY_CHAR.get(str(av), "a")
    return "a"


def _emit(parsed: Any, filler: str = "") -> str:
    out: list[str] = []
    groups: dict[int, str] = {}
    for op, av in parsed:
        if op == sre_constants.LITERAL:
            out.append(chr(av))
        elif op == sre_constants.NOT_LITERAL:
            out.append("a" if chr(av) != "a" else "b")
        elif op == sre_constants.ANY:
            out.append("a")
        elif op == sre_constants.IN:
            out.append(_in_set(av))
        elif op == sre_constants.BRANCH:
            out.append(_emit(av[1][0], filler))
        elif op == sre_constants.SUBPATTERN:
            text = _emit(av[-1], filler)
            if av[0] is not None:
                groups[av[0]] = text
            out.append(text)
        elif op in (
            sre_constants.MAX_REPEAT,
            sre_constants.MIN_REPEAT,
            getattr(sre_constants, "POSSESSIVE_REPEAT", -1),
        ):
            low, _high, sub = av
            if low == 0 and filler and list(sub) == [(sre_constants.ANY, None)]:
                out.append(filler)
            else:
                out.append(_emit(sub, filler) * low)
        elif op == sre_constants.ASSERT and av[0] == 1:
            # a look-ahead (`(?=.*laundry)`): its text is written here, for what follows to take in
            out.append(_emit(av[1], filler))
        elif op == sre_constants.GROUPREF:
            out.append(groups.get(av, ""))
        elif op == sre_constants.CATEGORY:
            out.append(_CATEGORY_CHAR.get(str(av), "a"))
        # AT (anchors), ASSERT / ASSERT_NOT (look-arounds) emit nothing
    return "".join(out)


def concrete(value: Any, schema: Any = None) -> Any:
    """An expected value as a run would write it: a pattern's example, and where the package lists
    alternatives (a list where the schema wants one value), the first. A list the schema calls an array is
    kept, element by element; an object, property by property."""
    schema = schema if isinstance(schema, dict) else {}
    if isinstance(value, list):
        if schema.get("type") == "array":
            return [concrete(v, schema.get("items")) for v in value]
        return concrete(value[0], schema) if value else value
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        return {k: concrete(v, props.get(k)) for k, v in value.items()}
    if isinstance(value, str) and is_pattern(value):
        return example(value)
    return value


def site_url(url: str, sites: list[str]) -> str:
    """A URL pattern's example, on the task's first site when the pattern names none (`^.*/route/v1/.*$`)."""
    text = example(url, filler="1") if is_pattern(url) else url
    if not PLACEHOLDER.match(text) and not text.startswith("http"):
        text = f"__{sites[0].upper()}__" + ("" if text.startswith("/") else "/") + text
    return text


# -- a request, as a HAR entry ------------------------------------------------------------------------------
_STEP = re.compile(r"\.([A-Za-z_][\w-]*)|\['([^']+)'\]|\[(\d+)\]|\[\?\(@\.(\w+)\s*==\s*([^)]+?)\)\]")


class Match(dict):  # type: ignore[type-arg]
    """A JSONPath filter step (`[?(@.newProduct == 1)]`): the list element that has these fields."""


def _jsonpath_target(key: str) -> list[Any]:
    """A JSONPath key as the steps that reach its value: `$.issue.assignee_ids` as ["issue", "assignee_ids"],
    `$.items[0].name` as ["items", 0, "name"], `$['a'][?(@.b == 1)].c` as ["a", Match(b=1), "c"]; the
    package's `$.^a|b$` names a key by a pattern (its example here)."""
    body = key[2:] if key.startswith("$.") else key[1:]
    if is_pattern(body):
        return [example(body)]
    if not body.startswith(("[", ".")):
        body = "." + body
    path: list[Any] = []
    at = 0
    for m in _STEP.finditer(body):
        if m.start() != at:
            raise Unsynthesizable(f"the JSONPath key {key!r} has a step verimut cannot write")
        at = m.end()
        name, quoted, index, field, value = m.groups()
        if field is not None:
            path.append(Match({field: json.loads(value.strip().replace("'", '"'))}))
        elif index is not None:
            path.append(int(index))
        else:
            path.append(name or quoted)
    if at != len(body):
        raise Unsynthesizable(f"the JSONPath key {key!r} has a step verimut cannot write")
    return path


def _child(node: Any, step: Any, after: Any) -> Any:
    empty: Any = [] if isinstance(after, (int, Match)) else {}
    if isinstance(step, Match):
        for item in node:
            if all(item.get(k) == v for k, v in step.items()):
                return item
        node.append(dict(step))
        return node[-1]
    if isinstance(step, int):
        while len(node) <= step:
            node.append(None)
        if node[step] is None:
            node[step] = empty
        return node[step]
    return node.setdefault(step, empty)


def nested(fields: dict[str, Any], schema: Any = None) -> dict[str, Any]:
    """The body that expected fields describe: JSONPath keys (`$.issue.assignee_ids`) become nested objects."""
    props = (schema or {}).get("properties") or {}
    body: dict[str, Any] = {}
    for key, value in fields.items():
        path = _jsonpath_target(key) if key.startswith("$") else [key]
        node: Any = body
        if len(path) >= 2 and isinstance(path[-2], Match) and isinstance(value, list):
            # `[?(@.new == 1)].attributes` expecting a list: one element that matches per value
            for step, after in itertools.pairwise(path[:-1]):
                node = _child(node, step, after)
            node.extend({**path[-2], path[-1]: concrete(item)} for item in value)
            continue
        for step, after in itertools.pairwise(path):
            node = _child(node, step, after)
        leaf, item = path[-1], concrete(value, props.get(key))
        if isinstance(leaf, int):
            while len(node) <= leaf:
                node.append(None)
        node[leaf] = item
    return body


def is_form(body: dict[str, Any]) -> bool:
    """Whether a body can be sent as a form (flat text values), as the browser sends most of the sites' posts."""
    return all(isinstance(v, str) for v in body.values())


def har_entry(request: dict[str, Any]) -> dict[str, Any]:
    """A request as verimut records it ({"method", "url", "post_data", "status", "headers", "response"}) as a
    HAR entry."""
    headers = [{"name": k, "value": render(str(v))} for k, v in (request.get("headers") or {}).items()]
    entry_request: dict[str, Any] = {"method": request["method"], "url": render(request["url"]), "headers": headers}
    body = request.get("post_data")
    if body is not None:
        if request.get("encoding", "form") == "form" and is_form(body):
            text = urllib.parse.urlencode(body)
            entry_request["postData"] = {"mimeType": "application/x-www-form-urlencoded", "text": text}
        else:
            entry_request["postData"] = {"mimeType": "application/json", "text": json.dumps(body)}
    status = int(request.get("status", 200))
    redirect = render(request.get("redirect") or "") if 300 <= status < 400 else ""
    content: dict[str, Any] = {}
    if request.get("response") is not None:
        content = {"mimeType": "application/json", "text": json.dumps(request["response"])}
    cookies = [{"name": k, "value": urllib.parse.quote(str(v))} for k, v in (request.get("cookies") or {}).items()]
    return {
        "request": entry_request,
        "response": {"status": status, "headers": [], "redirectURL": redirect, "content": content, "cookies": cookies},
    }


def with_query(url: str, query: dict[str, Any], schema: Any = None) -> str:
    if not query:
        return url
    props = (schema or {}).get("properties") or {}
    pairs = []
    for key, values in query.items():
        for value in values if isinstance(values, list) else [values]:
            item = concrete(value, props.get(key, {}).get("items"))
            pairs.append((key, "" if item is None else str(item[0] if isinstance(item, list) else item)))
            break  # the first alternative
    sep = "&" if "?" in url else "?"
    return url + sep + urllib.parse.urlencode(pairs)


def expected_request(spec: dict[str, Any], sites: list[str]) -> dict[str, Any]:
    """The request a network evaluator's `expected` block describes (the first alternative of each list)."""
    expected = spec["expected"]
    url = expected["url"]
    url = site_url(url[0] if isinstance(url, list) else url, sites)
    url = with_query(url, expected.get("query_params") or {}, spec.get("query_params_schema"))
    method = (expected.get("http_method") or "GET").upper()
    request: dict[str, Any] = {"method": method, "url": url, "status": int(expected.get("response_status") or 200)}
    headers = {}
    for name, value in (expected.get("headers") or {}).items():
        value = value[0] if isinstance(value, list) else value
        headers[name] = site_url(value, sites) if name.lower() in ("referer", "redirect_url") else concrete(value)
    if method == "GET":
        headers = {**dict(NAVIGATION_HEADERS), **headers}
    if headers:
        request["headers"] = headers
    if expected.get("post_data"):
        body = nested(expected["post_data"], spec.get("post_data_schema"))
        request["post_data"] = body
        # the fields the task fixes exactly, each as its path of keys (a pattern, or a JSONPath step that is no
        # plain key, is not one verimut varies)
        pinned = [_plain_path(k) for k, v in expected["post_data"].items() if _exact(v) and _plain_path(k)]
        if pinned:
            request["pinned"] = pinned
        if any(k.startswith("$") for k in expected["post_data"]) or not is_form(body):
            request["encoding"] = "json"
    if expected.get("response_content"):
        request["response"] = nested(expected["response_content"])
    if expected.get("response_cookies"):
        request["cookies"] = {k: concrete(v) for k, v in expected["response_cookies"].items()}
    if 300 <= request["status"] < 400:
        request["redirect"] = url
    # What the task itself accepts besides: the other URLs it lists, the query parameters it ignores by name.
    urls = expected["url"] if isinstance(expected["url"], list) else []
    query, query_schema = expected.get("query_params") or {}, spec.get("query_params_schema")
    listed = [with_query(site_url(u, sites), query, query_schema) for u in urls[1:] if isinstance(u, str)]
    if listed:
        request["listed"] = listed
    ignored = [*(spec.get("ignored_query_params") or ()), *(spec.get("ignored_query_params_patterns") or ())]
    names = [n for n in ignored if re.fullmatch(r"[A-Za-z_][\w-]*", n)]  # a name, or a pattern that is one word
    if names:
        request["ignored_query"] = names
    return request


def listed_items(data: Any, schema: Any = None, path: tuple[Any, ...] = ()) -> list[list[Any]]:
    """[path, [alternatives after the first]] for each retrieved value the task lists alternatives for (a list
    where its schema wants one value): the values the response may give instead."""
    schema = schema if isinstance(schema, dict) else {}
    if isinstance(data, list):
        if schema.get("type") == "array":
            return [x for i, v in enumerate(data) for x in listed_items(v, schema.get("items"), (*path, i))]
        return [[list(path), [concrete(v, schema) for v in data[1:]]]] if len(data) > 1 else []
    if isinstance(data, dict):
        props = schema.get("properties") or {}
        return [x for k, v in data.items() for x in listed_items(v, props.get(k), (*path, k))]
    return []


def _plain_path(key: str) -> list[str]:
    """A post-data key as the keys that reach it (`$.note.note` -> ["note", "note"]), or [] when a step is no
    plain key (an index, a filter, a pattern)."""
    if not key.startswith("$"):
        return [key]
    try:
        path = _jsonpath_target(key)
    except Unsynthesizable:
        return []
    return path if all(isinstance(p, str) for p in path) and not is_pattern(key[2:]) else []


def _exact(value: Any) -> bool:
    """An expected value given as one exact value: no pattern, no list of alternatives, no null."""
    if isinstance(value, str):
        return not is_pattern(value) and bool(value.strip())
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def expected_response(task: dict[str, Any]) -> dict[str, Any]:
    """The agent response the task's AgentResponseEvaluator expects (the first alternative of each item)."""
    for spec in task["eval"]:
        if spec["evaluator"] != "AgentResponseEvaluator":
            continue
        expected = spec["expected"]
        data = expected.get("retrieved_data")
        response: dict[str, Any] = {"task_type": expected["task_type"], "status": expected["status"]}
        response["retrieved_data"] = None if data is None else concrete(data, spec.get("results_schema"))
        response["error_details"] = None if expected["status"] == "SUCCESS" else "verimut's reference run"
        return response
    raise Unsynthesizable("the task has no AgentResponseEvaluator to say what the response is")


def results_schema(task: dict[str, Any]) -> dict[str, Any]:
    """The schema the task's AgentResponseEvaluator reads retrieved data by (type and format of each value)."""
    for spec in task["eval"]:
        if spec["evaluator"] == "AgentResponseEvaluator":
            return dict(spec.get("results_schema") or {})
    return {}
    raise Unsynthesizable("the task has no AgentResponseEvaluator to say what the response is")


def reference(task: dict[str, Any]) -> dict[str, Any]:
    """verimut's reference run for a task: a navigation to its start page, every request the network evaluators
    expect (a GET as a navigation), then the expected response."""
    requests: list[dict[str, Any]] = []
    sites = list(task["sites"])
    start = task["start_urls"][0] if task.get("start_urls") else None
    if start:
        requests.append({"method": "GET", "url": start, "status": 200, "headers": dict(NAVIGATION_HEADERS)})
    for spec in task["eval"]:
        if spec["evaluator"] != "NetworkEventEvaluator" or spec.get("should_not_exist"):
            continue
        requests.append(expected_request(spec, sites))
    schema = results_schema(task)
    listed: list[list[Any]] = []
    for spec in task["eval"]:
        if spec["evaluator"] == "AgentResponseEvaluator" and spec["expected"].get("retrieved_data"):
            listed = listed_items(spec["expected"]["retrieved_data"], spec.get("results_schema"))
    return {"requests": requests, "response": expected_response(task), "schema": schema, "listed": listed}
