"""A STAND-IN for a ServiceNow instance, served on loopback: it reproduces the navigation mechanism, not ServiceNow.

WorkArena's form tasks need a live ServiceNow instance, which these machines cannot reach. This
server imitates only what WorkArena's own code touches on the forms of its five form templates
(incident, change request, hardware asset, problem, user: the tables `incident`, `change_request`,
`alm_hardware`, `problem`, `sys_user`), so that the real, unmodified task classes, page scripts and
validator run against it in a real browser:

- login (`/login.do?user_name=..&user_password=..&sys_action=sysverb_login`, a session cookie);
- the top frame (`/now/nav/ui/classic/params/target/<page>`) holding the `gsft_main` iframe;
- the form page in the iframe, with the small part of the Glide client API WorkArena calls
  (`g_form`, `gsftSubmit`, `addAfterPageLoadedEvent`, `g_tabs2Sections`), where submit POSTs
  the form and the iframe navigates to the list (so the page, and anything stored on it, is gone);
- the Table API (`/api/now/table/<table>[/<sys_id>]`: GET with sysparm_query/fields/limit/offset/
  display_value, POST, PUT/PATCH, DELETE), the meta API (`/api/now/ui/meta/<table>`), with basic auth.

What it is not: no business rules, UI policies, ACLs, reference lookups or autocomplete (a
reference field is a text input holding the display name), no journal fields' history. Field
lists, labels and choice lists come from WorkArena's own data files (the forms it expects and
the values of its 1,000 shipped configurations per form); defaults, mandatory flags and raw
choice values are this stand-in's own choices (a field every configuration asks for is mandatory),
as are the column types of the fields the configurations fill (ServiceNow's, as far as known here).
A field no configuration fills is shown, disabled. `sys_user` is both the users' table and the user form's.
Everything it serves says "stand-in". Standard library only.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import re
import secrets
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib import parse

LABEL = "ServiceNow stand-in (offline imitation of the navigation mechanism, not ServiceNow)"
ADMIN = ("admin", "stand-in-admin")

# The config fields' types other than "string" a spec may name (tasks/form.py supported_types).
_TYPED = ("choice", "boolean", "reference", "email", "ph_number")


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    type: str
    editable: bool = True
    default: str = ""
    choices: tuple[str, ...] = ()  # display labels, in order; "" is "-- None --"
    dependent_on: str = ""
    multiline: bool = False


@dataclass(frozen=True)
class Form:
    table: str
    label: str
    number_prefix: str
    fields: tuple[Field, ...]
    mandatory: frozenset[str]

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


def _data(path: str) -> Any:
    from browsergym.workarena import data_files  # type: ignore[import-untyped]

    with resources.files(data_files).joinpath(path).open() as f:
        return json.load(f)


# Per form: its config file, expected-fields file, label, number prefix (for a form with a `number`),
# the types of the config's fields that are not plain strings (ServiceNow's types for those columns),
# which of them are multi-line, the other fields on the form (name: (label, type)), which field an
# other field depends on, and the on-form defaults. Types and defaults are the stand-in's choices.
_SPECS: dict[str, dict[str, Any]] = {
    "incident": {
        "configs": "task_configs/create_incident_task.json",
        "expected": "setup_files/forms/expected_incident_form_fields.json",
        "label": "Incident",
        "prefix": "INC",
        "choice": ["category", "close_code", "contact_type", "impact", "urgency"],
        "boolean": ["knowledge"],
        "reference": [
            "assignment_group",
            "business_service",
            "caller_id",
            "caused_by",
            "cmdb_ci",
            "parent_incident",
            "problem_id",
            "resolved_by",
            "rfc",
            "service_offering",
        ],
        "multiline": ["description", "close_notes"],
        "others": {
            "comments": ("Additional comments", "journal_input"),
            "assigned_to": ("Assigned to", "reference"),
            "hold_reason": ("On hold reason", "choice"),
            "priority": ("Priority", "choice"),
            "resolved_at": ("Resolved", "glide_date_time"),
            "state": ("State", "choice"),
            "subcategory": ("Subcategory", "choice"),
            "route_reason": ("Route reason", "choice"),
            "universal_request": ("Universal Request", "reference"),
            "watch_list": ("Watch list", "glide_list"),
            "work_notes": ("Work notes", "journal_input"),
            "work_notes_list": ("Work notes list", "glide_list"),
        },
        "dependent": {"assigned_to": "assignment_group", "subcategory": "category"},
        "defaults": {
            "category": "Inquiry / Help",
            "impact": "3 - Low",
            "urgency": "3 - Low",
            "knowledge": "false",
            "state": "New",
            "priority": "5 - Planning",
        },
    },
    "change_request": {
        "configs": "task_configs/create_change_request_task.json",
        "expected": "setup_files/forms/expected_change_request_form_fields.json",
        "label": "Change Request",
        "prefix": "CHG",
        "choice": ["category", "close_code", "impact", "risk"],
        "boolean": [],
        "reference": ["assignment_group", "business_service", "cmdb_ci", "service_offering"],
        "multiline": [
            "backout_plan",
            "close_notes",
            "description",
            "implementation_plan",
            "justification",
            "risk_impact_analysis",
            "test_plan",
        ],
        "others": {
            "work_end": ("Actual end", "glide_date_time"),
            "work_start": ("Actual start", "glide_date_time"),
            "comments": ("Additional comments", "journal_input"),
            "assigned_to": ("Assigned to", "reference"),
            "conflict_last_run": ("Conflict last run", "glide_date_time"),
            "conflict_status": ("Conflict status", "choice"),
            "chg_model": ("Model", "reference"),
            "on_hold": ("On hold", "boolean"),
            "on_hold_reason": ("On hold reason", "string"),
            "end_date": ("Planned end date", "glide_date_time"),
            "start_date": ("Planned start date", "glide_date_time"),
            "state": ("State", "choice"),
            "type": ("Type", "choice"),
            "watch_list": ("Watch list", "glide_list"),
            "work_notes": ("Work notes", "journal_input"),
            "work_notes_list": ("Work notes list", "glide_list"),
        },
        "dependent": {"assigned_to": "assignment_group"},
        "defaults": {
            "category": "Other",
            "impact": "3 - Low",
            "risk": "Moderate",
            "state": "New",
            "conflict_status": "Not Run",
            "type": "Normal",
            "on_hold": "false",
        },
    },
    "alm_hardware": {
        "configs": "task_configs/create_hardware_asset_task.json",
        "expected": "setup_files/forms/expected_hardware_form_fields.json",
        "label": "Hardware",
        "prefix": "",
        "choice": ["acquisition_method", "asset_function", "expenditure_type"],
        "boolean": [],
        "reference": [
            "assigned_to",
            "beneficiary",
            "company",
            "cost_center",
            "department",
            "depreciation",
            "location",
            "managed_by",
            "model",
            "model_category",
            "owned_by",
            "parent",
            "request_line",
            "support_group",
            "supported_by",
            "vendor",
        ],
        "multiline": ["comments", "disposal_reason"],
        "others": {
            "assigned": ("Assigned", "glide_date_time"),
            "sys_class_name": ("Class", "sys_class_name"),
            "ci": ("Configuration Item", "reference"),
            "cost": ("Cost", "currency"),
            "depreciated_amount": ("Depreciated amount", "currency"),
            "depreciation_date": ("Depreciation effective date", "glide_date"),
            "display_name": ("Display name", "string"),
            "eligible_for_refresh": ("Eligible for refresh", "boolean"),
            "install_date": ("Installed", "glide_date_time"),
            "request_line.opened_at": ("Opened", "glide_date_time"),
            "quantity": ("Quantity", "integer"),
            "resale_price": ("Resale price", "currency"),
            "reserved_for": ("Reserved for", "reference"),
            "residual_date": ("Residual date", "glide_date"),
            "residual": ("Residual value", "currency"),
            "retired": ("Retired date", "glide_date"),
            "salvage_value": ("Salvage value", "currency"),
            "retirement_date": ("Scheduled retirement", "glide_date"),
            "install_status": ("State", "choice"),
            "stockroom": ("Stockroom", "reference"),
            "substatus": ("Substate", "choice"),
            "warranty_expiration": ("Warranty expiration", "glide_date"),
            "work_notes": ("Work notes", "journal_input"),
            "active_to": ("Active transfer order", "boolean"),
        },
        "dependent": {"substatus": "install_status"},
        "defaults": {
            "acquisition_method": "",
            "asset_function": "",
            "expenditure_type": "",
            "install_status": "On order",
            "eligible_for_refresh": "false",
            "quantity": "1",
            "sys_class_name": "Hardware",
        },
    },
    "problem": {
        "configs": "task_configs/create_problem_task.json",
        "expected": "setup_files/forms/expected_problem_form_fields.json",
        "label": "Problem",
        "prefix": "PRB",
        "choice": ["category", "impact", "urgency"],
        "boolean": [],
        "reference": ["assignment_group", "business_service", "cmdb_ci", "service_offering"],
        "multiline": ["description"],
        "others": {
            "assigned_to": ("Assigned to", "reference"),
            "cause_notes": ("Cause notes", "html"),
            "close_notes": ("Close notes", "string"),
            "closed_at": ("Closed", "glide_date_time"),
            "closed_by": ("Closed by", "reference"),
            "confirmed_at": ("Confirmed", "glide_date_time"),
            "confirmed_by": ("Confirmed by", "reference"),
            "duplicate_of": ("Duplicate of", "reference"),
            "first_reported_by_task": ("First reported by", "reference"),
            "fix_at": ("Fix at", "glide_date_time"),
            "fix_by": ("Fix by", "reference"),
            "fix_communicated_at": ("Fix communicated", "glide_date_time"),
            "fix_communicated_by": ("Fix communicated by", "reference"),
            "fix_notes": ("Fix notes", "html"),
            "number": ("Number", "string"),
            "opened_at": ("Opened", "glide_date_time"),
            "opened_by": ("Opened by", "reference"),
            "priority": ("Priority", "choice"),
            "resolution_code": ("Resolution code", "choice"),
            "resolved_at": ("Resolved", "glide_date_time"),
            "resolved_by": ("Resolved by", "reference"),
            "state": ("State", "choice"),
            "subcategory": ("Subcategory", "choice"),
            "work_notes": ("Work notes", "journal_input"),
            "work_notes_list": ("Work notes list", "glide_list"),
            "workaround": ("Workaround", "html"),
            "workaround_applied": ("Workaround applied", "boolean"),
            "workaround_communicated_at": ("Workaround communicated", "glide_date_time"),
            "workaround_communicated_by": ("Workaround communicated by", "reference"),
        },
        "dependent": {"assigned_to": "assignment_group", "subcategory": "category"},
        "defaults": {
            "category": "",
            "impact": "3 - Low",
            "urgency": "3 - Low",
            "priority": "5 - Planning",
            "state": "New",
            "resolution_code": "",
            "workaround_applied": "false",
        },
    },
    "sys_user": {
        "configs": "task_configs/create_user_task.json",
        "expected": "setup_files/forms/expected_user_form_fields.json",
        "label": "User",
        "prefix": "",
        "choice": ["calendar_integration", "date_format", "preferred_language", "time_zone"],
        "boolean": [
            "active",
            "internal_integration_user",
            "locked_out",
            "password_needs_reset",
            "web_service_access_only",
        ],
        "reference": ["department"],
        "email": ["email"],
        "ph_number": ["mobile_phone", "phone"],
        "multiline": [],
        "others": {
            "notification": ("Notification", "choice"),
            "user_password": ("Password", "password2"),
            "photo": ("Photo", "user_image"),
        },
        "dependent": {},
        "defaults": {
            "active": "true",
            "calendar_integration": "Outlook",
            "date_format": "",
            "preferred_language": "",
            "time_zone": "",
            "internal_integration_user": "false",
            "locked_out": "false",
            "password_needs_reset": "false",
            "web_service_access_only": "false",
            "notification": "Enable",
        },
    },
}
FORMS = tuple(_SPECS)


@cache
def form(table: str) -> Form:
    """The stand-in's form for `table`, built from WorkArena's own data files."""
    spec = _SPECS[table]
    configs = _data(spec["configs"])
    labels: dict[str, str] = dict(configs[0]["fields"])
    seen: dict[str, list[str]] = {}
    for c in configs:
        for name in c["fields"]:
            value = c["template_record"].get(name)
            if isinstance(value, str) and value not in seen.setdefault(name, []):
                seen[name].append(value)
    asked = [set(c["task_fields"]) for c in configs]
    mandatory = frozenset(set.intersection(*asked))
    defaults: dict[str, str] = spec["defaults"]
    fields: list[Field] = []
    for name in _data(spec["expected"]):
        default = defaults.get(name, "")
        if name in labels:  # a field WorkArena's configurations fill: editable
            kind = next((k for k in _TYPED if name in spec.get(k, ())), "string")
            choices: tuple[str, ...] = ()
            if kind == "choice":
                options = sorted(set(seen.get(name, [])) | {default} | ({""} if name not in mandatory else set()))
                choices = tuple(options)
                if len({raw_choice(c) for c in choices}) != len(choices):
                    raise ValueError(f"stand-in {table}.{name}: two choice labels share one stored value")
            fields.append(Field(name, labels[name], kind, True, default, choices, multiline=name in spec["multiline"]))
        else:
            label, kind = spec["others"][name]
            choices = (default,) if kind == "choice" else ()
            fields.append(Field(name, label, kind, False, default, choices, spec["dependent"].get(name, "")))
    return Form(table, spec["label"], spec["prefix"], tuple(fields), mandatory)


def raw_choice(label: str) -> str:
    """The stored value of a choice label: "3 - Low" -> "3", "Inquiry / Help" -> "inquiry_help" (the stand-in's rule)."""
    numbered = re.match(r"^(\d+) - ", label)
    if numbered:
        return numbered.group(1)
    # "." and "-" are kept: the user form's date formats differ only in them ("dd-MM-yyyy", "dd.MM.yyyy").
    return re.sub(r"[^\w.-]+", "_", label.lower()).strip("_")


def _display(f: Field | None, raw: Any) -> Any:
    if f is not None and f.type == "choice":
        return next((c for c in f.choices if raw_choice(c) == raw), raw)
    return raw


def _stored(f: Field | None, value: Any) -> Any:
    """What a written value is stored as: a choice label (or its raw value) becomes the raw value."""
    if f is not None and f.type == "choice" and isinstance(value, str):
        return raw_choice(value) if value in f.choices else value
    if f is not None and f.type == "boolean":
        return "true" if str(value).lower() in ("true", "on", "1") else "false"
    return value


# --- state ---------------------------------------------------------------------------------------


@dataclass
class Store:
    """The stand-in's tables (records hold raw values), users and sessions. One lock: it is small."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    sessions: dict[str, str] = field(default_factory=dict)  # cookie -> user_name
    numbers: Iterator[int] = field(default_factory=lambda: itertools.count(10001))
    lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        now = _now()
        self.tables = {
            "sys_user": [
                {
                    "sys_id": _sys_id(),
                    "user_name": ADMIN[0],
                    "user_password": ADMIN[1],
                    "first_name": "System",
                    "last_name": "Administrator",
                    "active": "true",
                    "sys_created_by": "system",
                    "sys_created_on": now,
                },
            ],
            "sys_user_role": [{"sys_id": _sys_id(), "name": "admin"}],
            "sys_user_has_role": [],
            "sys_user_preference": [],
            "m2m_theme_style": [
                {
                    "sys_id": _sys_id(),
                    "theme.name": "WorkArena",
                    "theme.sys_id": _sys_id(),
                    "style.name": "Stand-in",
                    "style.sys_id": _sys_id(),
                    "style.type": "variant",
                },
            ],
            "sys_db_object": [{"sys_id": _sys_id(), "name": t, "label": form(t).label} for t in FORMS],
            "sys_dictionary": [
                {"sys_id": _sys_id(), "name": t, "element": f.name, "dependent_on_field": f.dependent_on}
                for t in FORMS
                for f in form(t).fields
            ],
        }
        for t in FORMS:  # sys_user is both the users' table and the user form's
            self.tables.setdefault(t, [])

    def user(self, name: str, password: str | None = None) -> dict[str, Any] | None:
        for u in self.tables["sys_user"]:
            if u.get("user_name") == name and (password is None or u.get("user_password") == password):
                return u
        return None


def _sys_id() -> str:
    return uuid.uuid4().hex


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _matches(record: dict[str, Any], query: str, table: str) -> bool:
    """A small subset of ServiceNow's encoded queries: clauses `f=v` and `fISNOTEMPTY`, joined by ^ (or ,)."""
    f = form(table) if table in FORMS else None
    for clause in filter(None, re.split(r"[\^,]", query)):
        if clause.startswith("ORDERBY"):  # records are kept in creation order already
            continue
        if clause.endswith("ISNOTEMPTY"):
            if record.get(clause[: -len("ISNOTEMPTY")]) in (None, ""):
                return False
            continue
        name, _, want = clause.partition("=")
        have = record.get(name)
        field_ = f.field(name) if f else None
        if str(have) != want and str(_display(field_, have)) != want:
            return False
    return True


def _render(record: dict[str, Any], table: str, display: str, fields: list[str] | None) -> dict[str, Any]:
    f = form(table) if table in FORMS else None
    out: dict[str, Any] = {}
    for name in fields or list(record):
        raw = record.get(name, "")
        shown = _display(f.field(name) if f else None, raw)
        out[name] = {"display_value": shown, "value": raw} if display == "all" else shown if display == "true" else raw
    return out


# --- pages ---------------------------------------------------------------------------------------

_BANNER = f'<div id="standin-banner" style="background:#fde68a;padding:4px;font:12px sans-serif">{LABEL}</div>'

# The part of the Glide client API WorkArena's task code and page scripts call. gsftSubmit must be
# self-contained: WorkArena's patch re-creates it from its source text.
_GLIDE = """
var _afterLoad = [];
function addAfterPageLoadedEvent(f) { if (document.readyState === 'complete') { setTimeout(f, 0); } else { _afterLoad.push(f); } }
window.addEventListener('load', function () { var fs = _afterLoad; _afterLoad = []; fs.forEach(function (f) { f(); }); });
function _ancestors() { var out = [], e = this.parentElement; while (e) { out.push(e); e = e.parentElement; } return out; }
var g_tabs2Sections = {tabIDs: [], tabsTabs: []};
function gsftSubmit(control, form, action_name) {
    var missing = g_form.elements.filter(function (e) {
        var c = g_form.getControl(e.fieldName);
        return e.mandatory && c && (c.type === 'checkbox' ? false : c.value === '');
    });
    if (missing.length) {
        document.getElementById('standin-messages').textContent =
            'The following mandatory fields are not filled in: ' + missing.map(function (e) { return g_form.getLabelOf(e.fieldName); }).join(', ');
        return false;
    }
    form.elements['sys_action'].value = action_name;
    form.submit();
    return false;
}
"""


def _g_form(f: Form) -> str:
    elements = [{"fieldName": x.name, "type": x.type, "mandatory": x.name in f.mandatory} for x in f.fields]
    meta = {x.name: {"label": x.label, "editable": x.editable} for x in f.fields}
    return f"""
var g_form = {{
    tableName: {json.dumps(f.table)},
    elements: {json.dumps(elements)},
    _meta: {json.dumps(meta)},
    getControl: function (n) {{ return document.getElementById({json.dumps(f.table)} + '.' + n); }},
    getElement: function (n) {{ var e = this.getControl(n); if (e) {{ e.ancestors = _ancestors; }} return e; }},
    getGlideUIElement: function (n) {{ return this._meta[n] ? {{fieldName: n}} : null; }},
    getLabelOf: function (n) {{ return this._meta[n] ? this._meta[n].label : ''; }},
    getEditableFields: function () {{ var m = this._meta; return Object.keys(m).filter(function (n) {{ return m[n].editable; }}); }},
    isVisible: function (ui, control) {{ return !!(ui && control && control.offsetParent !== null); }},
    getUniqueValue: function () {{ return document.getElementById('sys_uniqueValue').value; }},
    getValue: function (n) {{ var c = this.getControl(n); return !c ? '' : c.type === 'checkbox' ? String(c.checked) : c.value; }},
    setMandatory: function (n, on) {{ this.elements.forEach(function (e) {{ if (e.fieldName === n) {{ e.mandatory = !!on; }} }}); }},
}};
"""


def _control(f: Form, x: Field, number: str) -> str:
    ident = f"{f.table}.{x.name}"
    attrs = f'id="{ident}" name="{ident}"' + ("" if x.editable else " disabled")
    if x.type == "choice":
        options = "".join(
            f'<option value="{html.escape(raw_choice(c))}"{" selected" if c == x.default else ""}>'
            f"{html.escape(c) or '-- None --'}</option>"
            for c in x.choices
        )
        return f"<select {attrs}>{options}</select>"
    if x.type == "boolean":
        return f'<input type="checkbox" value="true" {attrs}{" checked" if x.default == "true" else ""}>'
    value = number if x.name == "number" else x.default
    if x.multiline or x.type == "journal_input":
        return f"<textarea {attrs}>{html.escape(value)}</textarea>"
    return f'<input type="text" {attrs} value="{html.escape(value)}">'


def form_page(f: Form, number: str) -> str:
    rows = "".join(
        f'<div class="row"><label for="{f.table}.{x.name}">{html.escape(x.label)}</label>{_control(f, x, number)}</div>'
        for x in f.fields
    )
    return f"""<!DOCTYPE html><html><head><title>{f.label} | {LABEL}</title>
<script>{_GLIDE}{_g_form(f)}</script></head><body>{_BANNER}
<div id="standin-messages" role="alert"></div>
<form id="standin-form" method="POST" action="/{f.table}.do">
<input type="hidden" id="sys_uniqueValue" name="sys_uniqueValue" value="{_sys_id()}">
<input type="hidden" name="sys_action" value="">
<div id="section-main">{rows}</div>
<button type="button" id="sysverb_insert" onclick="gsftSubmit(this, this.form, 'sysverb_insert')">Submit</button>
</form></body></html>"""


def list_page(f: Form, records: list[dict[str, Any]]) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(str(r.get('number', '')))}</td><td>{html.escape(str(r.get('short_description', '')))}</td></tr>"
        for r in records
    )
    return f"""<!DOCTYPE html><html><head><title>{f.label}s | {LABEL}</title><script>{_GLIDE}</script></head>
<body>{_BANNER}<a id="sysverb_new" href="/{f.table}.do">New</a><table id="{f.table}_list">{rows}</table></body></html>"""


def top_page(target: str) -> str:
    return f"""<!DOCTYPE html><html><head><title>{LABEL}</title></head><body>{_BANNER}
<iframe id="gsft_main" name="gsft_main" src="/{html.escape(target)}" style="width:100%;height:640px;border:0"></iframe>
</body></html>"""


# --- the server ----------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server: StandIn

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- plumbing
    def _send(
        self, code: int, body: str | bytes = b"", kind: str = "text/html", headers: dict[str, str] | None = None
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _json(self, code: int, value: Any) -> None:
        self._send(code, json.dumps(value), "application/json")

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _api_user(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Basic "):
            return None
        name, _, password = base64.b64decode(auth[6:]).decode().partition(":")
        with self.server.store.lock:
            return name if self.server.store.user(name, password) else None

    def _session_user(self) -> str | None:
        cookies = dict(c.strip().split("=", 1) for c in self.headers.get("Cookie", "").split(";") if "=" in c)
        return self.server.store.sessions.get(cookies.get("standin_session", ""))

    # -- verbs
    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def do_PUT(self) -> None:
        self._route("PUT")

    def do_PATCH(self) -> None:
        self._route("PUT")

    def do_DELETE(self) -> None:
        self._route("DELETE")

    def _route(self, method: str) -> None:
        url = parse.urlsplit(self.path)
        query = {k: v[-1] for k, v in parse.parse_qs(url.query, keep_blank_values=True).items()}
        path = url.path
        if path.startswith("/api/now/"):
            if self._api_user() is None:
                return self._json(401, {"error": {"message": "User Not Authenticated"}})
            if path.startswith("/api/now/table/"):
                return self._table(method, path[len("/api/now/table/") :].strip("/"), query)
            if path.startswith("/api/now/ui/meta/"):
                return self._meta(path[len("/api/now/ui/meta/") :].strip("/"))
            return self._json(404, {"error": {"message": "not served by the stand-in"}})
        if path in ("/", ""):
            return self._send(200, f"<html><head><title>{LABEL}</title></head><body>{_BANNER}</body></html>")
        if path == "/login.do":
            return self._login(query)
        user = self._session_user()
        if user is None:
            return self._send(302, headers={"Location": "/login.do"})
        if path.startswith("/now/nav/ui/classic/params/target/"):
            return self._send(200, top_page(parse.unquote(path[len("/now/nav/ui/classic/params/target/") :])))
        page = path.strip("/")
        table = page.removesuffix("_list.do").removesuffix(".do")
        if table in FORMS and page.endswith("_list.do"):
            with self.server.store.lock:
                records = list(self.server.store.tables[table])
            return self._send(200, list_page(form(table), records))
        if table in FORMS and page.endswith(".do"):
            if method == "POST":
                return self._submit(table, user)
            number = f"{form(table).number_prefix}{next(self.server.store.numbers):07d}"
            return self._send(200, form_page(form(table), number))
        # Hook: the service-catalog pages and the order (catalog_standin.py).
        from verimut.adapters.workarena.catalog_standin import Chrome, serve

        if serve(self, method, page, query, user, Chrome(LABEL, _BANNER, _GLIDE)):
            return None
        return self._send(404, f"<html><body>{_BANNER}not served by the stand-in: {html.escape(path)}</body></html>")

    def _login(self, query: dict[str, str]) -> None:
        name, password = query.get("user_name", ""), query.get("user_password", "")
        with self.server.store.lock:
            ok = query.get("sys_action") == "sysverb_login" and self.server.store.user(name, password) is not None
        if not ok:
            return self._send(
                200, f"<html><head><title>Log in | ServiceNow</title></head><body>{_BANNER}</body></html>"
            )
        cookie = secrets.token_hex(16)
        self.server.store.sessions[cookie] = name
        self._send(302, headers={"Location": "/now/nav/ui/home", "Set-Cookie": f"standin_session={cookie}; Path=/"})

    def _submit(self, table: str, user: str) -> None:
        f = form(table)
        posted = {k: v[-1] for k, v in parse.parse_qs(self._body().decode(), keep_blank_values=True).items()}
        record: dict[str, Any] = {x.name: _stored(x, x.default) for x in f.fields}
        for x in f.fields:
            key = f"{table}.{x.name}"
            if x.editable and (key in posted or x.type == "boolean"):
                record[x.name] = _stored(x, posted.get(key, "false"))
        record.update(sys_id=posted.get("sys_uniqueValue") or _sys_id(), sys_created_by=user, sys_created_on=_now())
        with self.server.store.lock:
            self.server.store.tables[table].append(record)
        self._send(302, headers={"Location": f"/{table}_list.do"})

    def _meta(self, table: str) -> None:
        if table not in FORMS:
            return self._json(404, {"error": {"message": f"no table {table}"}})
        f = form(table)
        columns = {
            x.name: {
                "name": x.name,
                "label": x.label,
                "type": x.type,
                "max_length": 4000 if x.multiline else 160,
                "mandatory": x.name in f.mandatory,
                **(
                    {"choices": [{"value": raw_choice(c), "label": c or "-- None --"} for c in x.choices]}
                    if x.choices
                    else {}
                ),
            }
            for x in f.fields
        }
        self._json(200, {"result": {"columns": columns}})

    def _table(self, method: str, rest: str, query: dict[str, str]) -> None:
        table, _, sys_id = rest.partition("/")
        store = self.server.store
        f = form(table) if table in FORMS else None
        creator = self._api_user()
        with store.lock:
            if table not in store.tables:
                store.tables[table] = []
            rows = store.tables[table]
            if method == "GET":
                found = [r for r in rows if (not sys_id or r["sys_id"] == sys_id)]
                found = [r for r in found if _matches(r, query.get("sysparm_query", ""), table)]
                offset = int(query.get("sysparm_offset") or 0)
                limit = int(query.get("sysparm_limit") or len(found) or 1)
                fields = [x for x in query.get("sysparm_fields", "").split(",") if x] or None
                display = str(query.get("sysparm_display_value", "false")).lower()
                return self._json(
                    200, {"result": [_render(r, table, display, fields) for r in found[offset : offset + limit]]}
                )
            if method == "DELETE":
                kept = [r for r in rows if r["sys_id"] != sys_id]
                if len(kept) == len(rows):
                    return self._json(404, {"error": {"message": "No Record found"}})
                store.tables[table] = kept
                return self._send(204)
            body = json.loads(self._body() or b"{}")
            values = {
                k: (_stored(f.field(k), v) if f else (str(v).lower() if isinstance(v, bool) else v))
                for k, v in body.items()
            }
            if method == "POST":
                record = {**values, "sys_id": _sys_id(), "sys_created_by": creator, "sys_created_on": _now()}
                rows.append(record)
                return self._json(201, {"result": record})
            target = next((r for r in rows if r["sys_id"] == sys_id), None)
            if target is None:
                return self._json(404, {"error": {"message": "No Record found"}})
            target.update(values)
            return self._json(200, {"result": target})


class StandIn(ThreadingHTTPServer):
    """The stand-in instance. `url` is where it listens (loopback, a free port)."""

    daemon_threads = True

    def __init__(self) -> None:
        for t in FORMS:
            form(t)  # read WorkArena's data files once, before serving
        super().__init__(("127.0.0.1", 0), _Handler)
        self.store = Store()
        # Hook: the service catalog's items, variables and request tables (catalog_standin.py).
        from verimut.adapters.workarena.catalog_standin import seed

        seed(self.store)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self._thread = threading.Thread(target=self.serve_forever, name="servicenow-stand-in", daemon=True)

    def start(self) -> StandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def records(self, table: str) -> list[dict[str, Any]]:
        with self.store.lock:
            return [dict(r) for r in self.store.tables.get(table, [])]
