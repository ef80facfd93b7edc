"""The STAND-IN's service catalog: the pages and Table API records WorkArena's ordering tasks touch. Not ServiceNow.

Part of the offline ServiceNow stand-in (servicenow_standin.py, which mounts these routes and seeds
these tables). What WorkArena's `Order...Task` classes (tasks/service_catalog.py) drive and read:

- `catalog_home.do` (the task's start page) with a "Hardware" link, the category page listing the
  items as `<h2>` headings, and the item page `com.glideapp.servicecatalog_cat_item_view.do?sysparm_id=..`:
  the item's variables, a `#quantity` select and the `#oi_order_now_button`;
- ordering POSTs the item form into the top window, and the stand-in answers with the checkout page
  whose top-window URL carries the new request's id (`...checkout_view_v2.do%3F...sysparm_sys_id%3D<id>`),
  which is where WorkArena's `validate()` reads it;
- the Table API records that validation and the audit's readback read: `sc_request`, `sc_req_item`
  (short_description, quantity), `sc_item_option` and `sc_item_option_mtom`.

Where the data comes from: each item (name, short description) and its variables (question text, type,
legal values) are read from WorkArena's own task configuration files (`data_files/task_configs/order_*`),
one per catalog task class. Its own choices, not ServiceNow's: a checkbox starts unchecked, a textarea
empty, a radio with nothing selected, quantity 1 of 1..10; no prices, cart, approvals or mandatory
variables. It does not resolve references: the two dot-walked columns WorkArena reads from
`sc_item_option_mtom` are stored on that record when the order is placed (options do not change after).
Deleting an `sc_request` does not cascade to its items (the adapter's teardown removes what is left).
Everything it serves says "stand-in". Standard library only (plus WorkArena's data files).
"""

from __future__ import annotations

import html
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any
from urllib import parse

# The stand-in's store and request handler (servicenow_standin.py) are typed Any here: that module mounts
# this one, and importing it back would be a cycle. Its page chrome arrives as a `Chrome`.

CATEGORY = "Hardware"
QUANTITIES = tuple(str(n) for n in range(1, 11))  # the stand-in's quantity select (WorkArena's configs use 1..10)
TABLES = ("sc_request", "sc_req_item", "sc_item_option", "sc_item_option_mtom")
CHECKOUT = "com.glideapp.servicecatalog_checkout_view_v2.do"
ORDER = "standin_catalog_order.do"  # the stand-in's own order endpoint (ServiceNow orders through its own AJAX)
_NS = uuid.UUID("6f1d1d57-5e37-4f0e-9d0b-3d1c1a7e0c01")  # stable sys_ids: the same item, the same id every run


def _stable_id(*parts: str) -> str:
    return uuid.uuid5(_NS, "/".join(parts)).hex


@dataclass(frozen=True)
class Chrome:
    """What every stand-in page carries: its label, the visible banner, the Glide client API's script."""

    label: str
    banner: str
    glide: str


@dataclass(frozen=True)
class Variable:
    question: str  # the question text WorkArena's configuration names it by
    type: str  # "checkbox", "radio" or "textarea" (WorkArena's configuration's own words)
    values: tuple[str, ...]  # legal values seen in the configurations, in first-seen order
    sys_id: str

    @property
    def default(self) -> str:
        """The stand-in's own: unchecked, empty, no radio selected."""
        return "false" if self.type == "checkbox" else ""


@dataclass(frozen=True)
class Item:
    name: str
    description: str
    variables: tuple[Variable, ...]
    sys_id: str


def as_text(value: Any) -> str:
    """A configuration value as the page and the Table API hold it (a checkbox's True is "true")."""
    return str(value).lower() if isinstance(value, bool) else str(value)


@cache
def items() -> dict[str, Item]:
    """Every catalog item WorkArena orders, by name, from its task classes' configuration files."""
    from browsergym.workarena.tasks.service_catalog import __TASKS__  # type: ignore[import-untyped]

    out: dict[str, Item] = {}
    for cls in __TASKS__:
        configs = cls.all_configs()
        name = configs[0]["item"]
        seen: dict[str, tuple[str, list[str]]] = {}
        for c in configs:
            for question, (kind, value) in c["configuration"].items():
                values = seen.setdefault(question, (kind, []))[1]
                if as_text(value) not in values:
                    values.append(as_text(value))
        variables = tuple(
            Variable(q, kind, tuple(["true", "false"] if kind == "checkbox" else vs), _stable_id(name, q))
            for q, (kind, vs) in seen.items()
        )
        out[name] = Item(name, configs[0]["description"], variables, _stable_id(name))
    return out


def _by_id(sys_id: str) -> Item | None:
    return next((i for i in items().values() if i.sys_id == sys_id), None)


def seed(store: Any) -> None:
    """The catalog's definitions (items, variables) and its empty request tables."""
    store.tables["sc_cat_item"] = [
        {"sys_id": i.sys_id, "name": i.name, "short_description": i.description} for i in items().values()
    ]
    store.tables["item_option_new"] = [
        {"sys_id": v.sys_id, "cat_item": i.sys_id, "question_text": v.question, "type": v.type}
        for i in items().values()
        for v in i.variables
    ]
    for t in TABLES:
        store.tables.setdefault(t, [])


# --- pages ---------------------------------------------------------------------------------------


def _page(chrome: Chrome, title: str, body: str, script: str = "") -> str:
    return f"""<!DOCTYPE html><html><head><title>{html.escape(title)} | {chrome.label}</title>
<script>{chrome.glide}{script}</script></head><body>{chrome.banner}{body}</body></html>"""


def home_page(chrome: Chrome) -> str:
    link = f'<a href="/com.glideapp.servicecatalog_category_view.do?v=1&amp;sysparm_parent={_stable_id(CATEGORY)}">{CATEGORY}</a>'
    return _page(
        chrome, "Service Catalog", f'<div role="heading" aria-level="1">Service Catalog</div><div>{link}</div>'
    )


def category_page(chrome: Chrome) -> str:
    rows = "".join(
        f'<div class="item"><a href="/com.glideapp.servicecatalog_cat_item_view.do?v=1&amp;sysparm_id={i.sys_id}">'
        f"<h2>{html.escape(i.name)}</h2></a><p>{html.escape(i.description)}</p></div>"
        for i in items().values()
    )
    return _page(chrome, CATEGORY, f'<div role="heading" aria-level="1">{CATEGORY}</div>{rows}')


def _variable(v: Variable) -> str:
    ident = f"IO:{v.sys_id}"
    q = html.escape(v.question)
    if v.type == "checkbox":  # ServiceNow's shape: a hidden value and a label that toggles it
        return (
            f'<div class="variable"><span><input type="hidden" id="{ident}" name="{ident}" value="false">'
            f'<label id="ni.{ident}_label" onclick="_toggle(\'{ident}\')">{q}</label></span></div>'
        )
    if v.type == "radio":
        options = "".join(
            f'<span><input type="radio" id="{ident}_{n}" name="{ident}" value="{html.escape(x)}">'
            f'<label for="{ident}_{n}">{html.escape(x)}</label></span>'
            for n, x in enumerate(v.values)
        )
        return f'<fieldset class="variable"><legend>{q}</legend>{options}</fieldset>'
    return (
        f'<div class="variable"><label for="{ident}">{q}</label><textarea id="{ident}" name="{ident}"></textarea></div>'
    )


def _g_form(item: Item) -> str:
    """The part of the catalog's g_form the adapter's steps (and WorkArena's cheat) call, keyed by variable id."""
    labels = {f"IO:{v.sys_id}": v.question for v in item.variables}
    return f"""
function _toggle(id) {{ var c = document.getElementById(id); c.value = c.value === 'true' ? 'false' : 'true'; }}
var g_form = {{
    _labels: {json.dumps(labels)},
    getEditableFields: function () {{ return Object.keys(this._labels); }},
    getControls: function (n) {{ return document.getElementsByName(n); }},
    getControl: function (n) {{ return document.getElementsByName(n)[0] || null; }},
    getLabelOf: function (n) {{ return this._labels[n] || ''; }},
    getValue: function (n) {{
        var cs = Array.prototype.slice.call(document.getElementsByName(n));
        if (cs.length && cs[0].type === 'radio') {{ var on = cs.filter(function (c) {{ return c.checked; }}); return on.length ? on[0].value : ''; }}
        return cs.length ? cs[0].value : '';
    }},
}};
"""


def item_page(chrome: Chrome, item: Item) -> str:
    quantity = "".join(f'<option value="{q}"{" selected" if q == "1" else ""}>{q}</option>' for q in QUANTITIES)
    body = f"""<div role="heading" aria-level="1">{html.escape(item.name)}</div><p>{html.escape(item.description)}</p>
<form id="standin-order" method="POST" action="/{ORDER}" target="_top">
<input type="hidden" name="sysparm_id" value="{item.sys_id}">
<div id="variables">{"".join(_variable(v) for v in item.variables)}</div>
<div id="order"><label for="quantity">Quantity</label><select id="quantity" name="quantity">{quantity}</select>
<button type="submit" id="oi_order_now_button">Order Now</button></div>
</form>"""
    return _page(chrome, item.name, body, _g_form(item))


def checkout_page(chrome: Chrome, request: Mapping[str, Any] | None) -> str:
    if request is None:
        return _page(chrome, "Order Status", '<div role="alert">No such request (stand-in).</div>')
    return _page(
        chrome,
        "Order Status",
        f'<div role="heading" aria-level="1">Thank you, your request has been submitted</div>'
        f'<p>Request Number: <a id="requesturl">{html.escape(str(request.get("number", "")))}</a></p>',
    )


# --- the routes ----------------------------------------------------------------------------------


def serve(handler: Any, method: str, page: str, query: Mapping[str, str], user: str, chrome: Chrome) -> bool:
    """Answer a catalog page or the order (True), or leave the request to the stand-in's other routes (False)."""
    if page == "catalog_home.do":
        handler._send(200, home_page(chrome))
    elif page == "com.glideapp.servicecatalog_category_view.do":
        handler._send(200, category_page(chrome))
    elif page == "com.glideapp.servicecatalog_cat_item_view.do":
        item = _by_id(query.get("sysparm_id", ""))
        handler._send(
            *(200, item_page(chrome, item))
            if item
            else (404, _page(chrome, "Not found", "no such catalog item (stand-in)"))
        )
    elif page == CHECKOUT:
        with handler.server.store.lock:
            rows = handler.server.store.tables["sc_request"]
            request = next((r for r in rows if r["sys_id"] == query.get("sysparm_sys_id")), None)
        handler._send(200, checkout_page(chrome, request))
    elif page == ORDER and method == "POST":
        posted = {k: v[-1] for k, v in parse.parse_qs(handler._body().decode(), keep_blank_values=True).items()}
        item = _by_id(posted.get("sysparm_id", ""))
        if item is None:
            handler._send(404, _page(chrome, "Not found", "no such catalog item (stand-in)"))
            return True
        request_id = order(handler.server.store, item, posted, user)
        target = parse.quote(f"{CHECKOUT}?v=1&sysparm_sys_id={request_id}", safe="")
        handler._send(302, headers={"Location": f"/now/nav/ui/classic/params/target/{target}"})
    else:
        return False
    return True


def order(store: Any, item: Item, posted: Mapping[str, str], user: str) -> str:
    """Place one order as `user`: one request, one requested item, one option per variable. Returns the request's id."""
    quantity = posted.get("quantity", "1")
    with store.lock:
        person = store.user(user)
        made = {"sys_created_by": user, "sys_created_on": _now()}
        request = {
            "sys_id": _sys_id(),
            "number": f"REQ{next(store.numbers):07d}",
            "requested_for": person["sys_id"] if person else "",
            "request_state": "requested",
            **made,
        }
        req_item = {
            "sys_id": _sys_id(),
            "number": f"RITM{next(store.numbers):07d}",
            "request": request["sys_id"],
            "cat_item": item.sys_id,
            "short_description": item.description,
            "quantity": quantity if quantity in QUANTITIES else "1",
            **made,
        }
        store.tables["sc_request"].append(request)
        store.tables["sc_req_item"].append(req_item)
        for v in item.variables:
            value = posted.get(f"IO:{v.sys_id}", v.default)
            option = {"sys_id": _sys_id(), "item_option_new": v.sys_id, "value": value, **made}
            store.tables["sc_item_option"].append(option)
            store.tables["sc_item_option_mtom"].append(
                {
                    "sys_id": _sys_id(),
                    "request_item": req_item["sys_id"],
                    "sc_item_option": option["sys_id"],
                    # Dot-walked columns WorkArena's get_request_items() reads, stored (no reference resolution here).
                    "sc_item_option.value": value,
                    "sc_item_option.item_option_new.question_text": v.question,
                    **made,
                }
            )
    return str(request["sys_id"])


def _sys_id() -> str:
    return uuid.uuid4().hex


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
