"""What a WebArena trace asks the sites to change: the end state verimut's oracle compares.

No site runs in this audit, so the state is read off the evidence. Each write (POST, PUT, PATCH, DELETE) is
read as the change it asks for, by HTTP's own semantics and the sites' URL conventions (verimut's reading,
named on every finding, so an author can dispute it):

- a **toggle** (`.../toggle_star.json`): flips its record; made twice, it is undone;
- a **removal** (DELETE, or a POST to `.../delete/...` or `.../cancel/...`): the record is gone; again, still gone;
- an **update** (PUT or PATCH, RFC 9110's idempotent methods; a POST to an `edit`, `update`, `formPost`,
  `addressSave`, `edit_biography`, `profile`, `follow`, `subscribe` or vote URL, to a wish list, or to the
  harness's `dummy_bin` that captures a form left unsent; a `save` URL that names the record's id in its path or
  body): sets fields of the record at its URL, later values winning; made twice, the same record;
- a **create**, every other POST (a comment, a post, a project, a member, a cart line): a new record each time,
  except where a site keeps one per name (a member or invitation per user; a project, group, fork or forum per
  path; a product per name; a milestone per title; an open merge request per source branch; a shipment per
  order; one commit of the same files): a create that names a record made before is refused, and answers 409.

A request whose status is 400 or more changed nothing.

Reads (GETs) change nothing. Standard library only: this runs in WebArena-Verified's environment.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

CREATES = "creates"  # new records, keyed by creation order (assigned keys: matched by content)
RECORDS = "records"  # records at a URL: updated, toggled or removed
RESPONSE = "response"  # the agent's final response

_TOGGLE = re.compile(r"toggle", re.IGNORECASE)
_REMOVE = re.compile(r"/(delete|remove|cancel|destroy)(/|$|\.json)", re.IGNORECASE)
_UPDATE_VERB = re.compile(
    r"/save(/|$)", re.IGNORECASE
)  # a save acts on a record only when it names one (else it makes one)
# A verb that always acts on a record the URL names (a user's biography, a file on a branch, one's own profile);
# Magento's `.../back/edit` only says where a save returns to.
_NAMED_UPDATE = re.compile(
    r"(?<!/back)/(edit|update|formPost|addressSave|edit_biography|profile|follow|unfollow|subscribe|unsubscribe)"
    r"(/|$|\.json)"
    r"|/sv/\d+\.json$|/-/update/",
    re.IGNORECASE,
)
_ID_IN_PATH = re.compile(r"/(id|\w+_id)/\d+|/\d+(\.json)?/?$")  # Magento's `/store/0/set/4` are no record
_ID_IN_BODY = re.compile(r"(^|_)id$")


def is_write(method: str, url: str, body: Any) -> bool:
    """Whether a request asks a site to change something. A GraphQL POST is a query unless its body holds a
    `mutation` (GitLab's issue lists are read this way)."""
    if method.upper() not in ("POST", "PUT", "PATCH", "DELETE"):
        return False
    if target(url).rstrip("/").endswith("/graphql"):
        return "mutation" in str(body or "")
    return True


def kind(method: str, url: str, body: Any) -> str:
    """What a write asks of the record at `url`: "toggle", "remove", "update" or "create"."""
    method = method.upper()
    path = urllib.parse.urlsplit(url).path if "://" in url else url.split("?", 1)[0]
    if path.rstrip("/").endswith("/dummy_bin"):
        return "update"  # the harness's capture of a form left ready, not sent: the last one is the form
    if "/wishlist/index/add" in path:
        return "update"  # a wish list holds a product once (Magento raises the item's qty, which no task reads)
    if _TOGGLE.search(path):
        return "toggle"
    if method == "DELETE" or _REMOVE.search(path):
        return "remove"
    if method in ("PUT", "PATCH"):
        return "update"
    names_record = bool(_ID_IN_PATH.search(path)) or (
        isinstance(body, dict) and any(_ID_IN_BODY.search(str(k)) and v not in (None, "") for k, v in body.items())
    )
    if _NAMED_UPDATE.search(path) or (_UPDATE_VERB.search(path) and names_record):
        return "update"
    return "create"


# Records a site keeps one of: a member or invitation per user, a project, group, fork or forum per path. The
# same create made again is refused (GitLab answers 409 Conflict or 400 "has already been taken").
_UNIQUE = re.compile(
    r"/(members|invitations|fork|groups|create_forum|milestones|merge_requests)/?$|/api/v4/projects/?$"
    r"|^[^?]*?/projects/?$|/catalog/product/save/|/repository/commits/?$|/order_shipment/save/",
    re.IGNORECASE,
)
# What names such a record: the same value here is the same record, whatever else the two requests say.
IDENTITY = (
    "user_id",
    "path",
    "name",
    "project[path]",
    "project[name]",
    "group[path]",
    "forum[name]",
    "product[name]",
    "product[sku]",
    "title",
    "milestone[title]",
    "merge_request[source_branch]",
)
REFUSED = 409


def identity(method: str, url: str, body: Any) -> frozenset[str] | None:
    """What names the record a create makes, where a site keeps one per name (a member per user, a project per
    path or name, a product per name): each naming field as `url field=value`; None where the site keeps any
    number (a comment, a post, a cart line). Two creates that share one of these are the same record."""
    if kind(method, url, body) != "create" or not _UNIQUE.search(target(url)):
        return None
    fields = {k: v for k, v in body.items() if k in IDENTITY} if isinstance(body, dict) else {}
    if not fields:
        return frozenset({f"{target(url)} {body!r}"})
    return frozenset(f"{target(url)} {k}={v!r}" for k, v in fields.items())


def target(url: str) -> str:
    """The record a write acts on: its URL without the query (a site's cache-busting `?_=...` is no record)."""
    return url.split("?", 1)[0]


def state(requests: list[dict[str, Any]], response: Any) -> dict[str, Any]:
    """The end state the evidence describes: creates in order, records by URL, and the response. Each record
    carries its id, so the oracle reads every part as a collection of records (one changed, one added)."""
    creates: dict[str, Any] = {}
    records: dict[str, Any] = {}
    for r in requests:
        method, url, body = str(r.get("method", "GET")).upper(), str(r.get("url", "")), r.get("post_data")
        if not is_write(method, url, body):
            continue
        what, key = kind(method, url, body), target(url)
        if int(r.get("status") or 200) >= 400:
            continue  # the site refused it: nothing changed
        if what == "create":
            creates[str(len(creates))] = {"id": str(len(creates)), "method": method, "url": url, "body": body}
            continue
        was = records.get(key, {"id": key, "change": what, "fields": {}})
        if what == "toggle":
            on = not was["fields"].get("toggled", False)
            records[key] = {"id": key, "change": what, "fields": {"toggled": on}}
        elif what == "remove":
            records[key] = {"id": key, "change": what, "fields": {"removed": True}}
        else:
            fields = {**was["fields"], **(body if isinstance(body, dict) else {"body": body})}
            records[key] = {"id": key, "change": what, "fields": fields}
    final = {"final": {"id": "final", **response}} if isinstance(response, dict) else {}
    return {CREATES: creates, RECORDS: records, RESPONSE: final}


def describe_network(spec: dict[str, Any]) -> str:
    """One network evaluator's reach, from its configuration."""
    expected = spec["expected"]
    method = expected.get("http_method") or "GET"
    url = expected["url"][0] if isinstance(expected["url"], list) else expected["url"]
    which = "the last" if spec.get("last_event_only", True) else "any"
    fields = [
        f for f in ("post_data", "query_params", "headers", "response_status", "response_content") if expected.get(f)
    ]
    what = f"{which} {method} request to {url}" + (f" ({', '.join(fields)})" if fields else "")
    return ("no " + what[len(which) + 1 :]) if spec.get("should_not_exist") else what


def last_event_clash(raw: dict[str, Any]) -> str | None:
    """Why no trace can pass a task whose network evaluators grade one request each and want different ones,
    or None. Each evaluator looks at the last request to its URL (`last_event_only`, true unless the task says
    otherwise; a navigate task's GET evaluators, at the last page loaded): two that select the same requests and
    expect different ones cannot both pass."""
    navigate = any(
        s["evaluator"] == "AgentResponseEvaluator" and str(s["expected"].get("task_type")).lower() == "navigate"
        for s in raw["eval"]
    )
    specs = [s for s in raw["eval"] if s["evaluator"] == "NetworkEventEvaluator" and not s.get("should_not_exist")]
    for a, b in ((a, b) for i, a in enumerate(specs) for b in specs[i + 1 :]):
        if not (a.get("last_event_only", True) and b.get("last_event_only", True)):
            continue
        ma = (a["expected"].get("http_method") or "GET").upper()
        mb = (b["expected"].get("http_method") or "GET").upper()
        if ma != mb:
            continue
        if navigate and ma == "GET":
            return (
                "its evaluators each grade the last page loaded (a navigate task) and expect different pages"
                f" ({_url(a)} and {_url(b)}): no trace passes both"
            )
        if _url(a) == _url(b):
            return (
                f"two of its evaluators grade the last {ma} request to {_url(a)} and expect different ones"
                " (last_event_only): no trace passes both"
            )
    return None


def _url(spec: dict[str, Any]) -> str:
    url = spec["expected"]["url"]
    return str(url[0] if isinstance(url, list) else url)
