"""The evidence grammar: faults for verifiers that grade what a run leaves behind (WebArena-Verified).

A run there is browser requests, each an action named by its HTTP method (`GET`, `POST`, `PUT`, ...) with
`{"url", "post_data", "status", ...}`, then the agent's final response, the action `respond` (a marker: neither
read nor write) whose arguments are the response (`{"task_type", "status", "retrieved_data", ...}`) and the
schema the verifier reads its data by. A request's `pinned` lists the post-data fields the task's own expected
values fix exactly (not by a pattern), each as its path of keys: only those whose value the instruction states
are varied.

Registered by name in faults.py (imported when first named, so faults.py never imports this module). The
generic families carry over (claim-only, omit, extra, extra-ni, extra-oos, null-run, alt-reads, alt-order
declare this grammar too); these are what a trace and a response add. Each is a pure function of the reference
run; the oracle confirms every finding on the end state (the writes read as site changes, and the response).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from typing import Any

from verimut.core.run import Action, Run
from verimut.grammar.alternatives import RESTORE
from verimut.grammar.faults import ALTERNATIVE, Edit, FamilySpec, FaultContext, Refusal, declare
from verimut.grammar.pinned import states_number
from verimut.oracle.state import NEW

RESPOND = "respond"
EVIDENCE = ("evidence",)
# The package's statuses (webarena_verified.types.agent_response.Status), each another legal one for the others.
STATUSES = (
    "SUCCESS",
    "ACTION_NOT_ALLOWED_ERROR",
    "PERMISSION_DENIED_ERROR",
    "NOT_FOUND_ERROR",
    "DATA_VALIDATION_ERROR",
    "UNKNOWN_ERROR",
)


def _response(run: Run) -> tuple[int, dict[str, Any], dict[str, Any]] | Refusal:
    """The final response's position, the response, and the schema the verifier reads its data by."""
    for i in range(len(run.actions) - 1, -1, -1):
        if run.actions[i].name == RESPOND:
            args = run.actions[i].args
            return i, dict(args.get("response") or {}), dict(args.get("results_schema") or {})
    return Refusal("the reference run gives no response")


def _respond_with(run: Run, at: int, response: dict[str, Any]) -> Run:
    actions = list(run.actions)
    actions[at] = Action(RESPOND, {**run.actions[at].args, "response": response})
    return run.replace_actions(actions)


# --- values: a wrong one, one a little off, one that contains the right one ---------------------------------
_DISTANCE = re.compile(
    r"^\s*(\d+(?:[.,]\d+)?)\s*(km|m|mi|miles?|ft|feet|meters?|kilometers?|metres?|kilometres?)\s*$", re.IGNORECASE
)
_DURATION = re.compile(r"^\s*(?:(\d+)\s*(?:h|hr|hrs|hours?))?\s*(?:(\d+)\s*(?:min|mins|minutes?))?\s*$", re.IGNORECASE)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MONEY = re.compile(r"^\s*\$\s*(\d+(?:,\d{3})*(?:\.\d+)?)\s*$")


_METRES = {
    "m": 1.0,
    "meter": 1.0,
    "metre": 1.0,
    "km": 1000.0,
    "kilometer": 1000.0,
    "kilometre": 1000.0,
    "mi": 1609.344,
    "mile": 1609.344,
    "ft": 0.3048,
    "feet": 0.3048,
}


def _trim(x: float) -> str:
    """A number as few digits as keep it apart from its neighbours: 914.0 -> "914", 0.215 -> "0.215"."""
    return f"{x:.3f}".rstrip("0").rstrip(".")


# Formats the package compares by a documented fuzzy match (location names: thefuzz's token sort ratio >= 80): a
# value that contains the right one, or names two, may lie within it by design, so no edit here tests it.
FUZZY = frozenset({"location-name"})
TEXT = frozenset({"string", ""})  # formats read as text: the only ones a superstring is a different text in


def near_miss(value: Any, fmt: str = "") -> tuple[Any, str] | None:
    """The value just beyond the tolerance the package documents for its format, or None for a format without
    one: a distance 5 % and at least 15 m off (tolerance: max(10 m, 2 %)), a duration 20 % and 5 minutes off
    (max(3 min, 10 %)), an amount 0.50 off (0.1), a date a day later (none)."""
    if isinstance(value, bool):
        return None
    if fmt == "currency" and isinstance(value, (int, float)):
        return round(value + 0.5, 2), "amount, 0.50 off"
    if not isinstance(value, str):
        return None
    if (m := _DISTANCE.match(value)) and fmt in ("distance", ""):
        n = float(m.group(1).replace(",", "."))
        unit = m.group(2).lower()
        metres = _METRES[unit if unit in ("m", "km") else unit.rstrip("s")]
        off = max(0.05 * n, 15 / metres)  # 5 %, and at least 15 m: past max(10 m, 2 %)
        return f"{_trim(n + off)}{value[m.end(1) :].rstrip()}", "distance, 5 % (at least 15 m) off"
    if (m := _DURATION.match(value)) and (m.group(1) or m.group(2)) and fmt in ("duration", ""):
        minutes = int(m.group(1) or 0) * 60 + int(m.group(2) or 0)
        later = max(minutes + 5, round(minutes * 1.2))
        text = (f"{later // 60}h " if later >= 60 else "") + f"{later % 60}min"
        return text.strip(), "duration, 20 % and 5 min off"
    if _DATE.match(value) and fmt in ("date", ""):
        try:
            day = datetime.date.fromisoformat(value)
        except ValueError:
            return None
        return (day + datetime.timedelta(days=1)).isoformat(), "date, a day later"
    if (m := _MONEY.match(value)) and fmt in ("currency", ""):
        n = float(m.group(1).replace(",", ""))
        return f"${n + 0.5:,.2f}", "amount, 0.50 off"
    return None


def wrong(value: Any, fmt: str = "") -> tuple[Any, str] | None:
    """Another legal value of the same kind, clearly not the right one: a number + 1, a boolean flipped, a
    distance, duration or date well off; None for free text and names (no other legal value is known)."""
    if isinstance(value, bool):
        return (not value), "the other boolean"
    if isinstance(value, int):
        return value + 1, "the number + 1"
    if isinstance(value, float):
        moved = round(value + 1.0, 2)
        if moved == value:  # beyond 2**53 a float cannot move by one
            return value / 2 if value else 1.0, "the number halved"
        return moved, "the number + 1"
    if isinstance(value, str) and fmt not in FUZZY:
        # Well past the documented tolerances (distance: max(10 m, 2 %); duration: max(3 min, 10 %)).
        if m := _DISTANCE.match(value):
            n = float(m.group(1).replace(",", "."))
            unit = m.group(2).lower()
            metres = _METRES[unit if unit in ("m", "km") else unit.rstrip("s")]
            return f"{_trim(max(2 * n, n + 100 / metres))}{value[m.end(1) :].rstrip()}", "distance doubled, >= 100 m"
        if (m := _DURATION.match(value)) and (m.group(1) or m.group(2)):
            was = int(m.group(1) or 0) * 60 + int(m.group(2) or 0)
            minutes = max(2 * was, was + 10)
            text = (f"{minutes // 60}h " if minutes >= 60 else "") + f"{minutes % 60}min"
            return text.strip(), "duration doubled, >= 10 min"
        if _DATE.match(value):
            try:
                day = datetime.date.fromisoformat(value)
            except ValueError:
                return None
            return (day + datetime.timedelta(days=30)).isoformat(), "date, 30 days later"
        if re.fullmatch(r"-?\d+", value.strip()):
            return str(int(value) + 1), "the number + 1"
    return None


def superstring(value: Any, fmt: str = "") -> tuple[Any, str] | None:
    """A different value that contains the right one: 3 -> 13, "Sony X" -> "Sony X 2". None for a format the
    package compares fuzzily by design (FUZZY) and for booleans."""
    if isinstance(value, bool) or fmt in FUZZY:
        return None
    if isinstance(value, int):
        return int(f"1{abs(value)}") * (1 if value >= 0 else -1), "a digit put before"
    if isinstance(value, str) and value.strip():
        if re.fullmatch(r"-?\d+", value.strip()):
            return f"1{value.strip()}", "a digit put before"
        if fmt not in TEXT or _DISTANCE.match(value) or _DURATION.match(value) or _DATE.match(value):
            return None  # a month, date, distance, url...: parsed as what it names, not read as text
        return f"{value} 2", "another item's name around it"
    return None


def hedge(value: Any, fmt: str = "") -> tuple[Any, str] | None:
    """The value and a second candidate: 3 -> "3 or 4"."""
    other = wrong(value, fmt)
    if other is None or isinstance(value, bool):
        return None
    return f"{value} or {other[0]}", "two candidates"


Move = Callable[[Any, str], "tuple[Any, str] | None"]


def _items(data: Any, schema: Any = None) -> list[tuple[list[Any], Any, str]]:
    """Each scalar of retrieved data with where it sits (list indices and object keys) and its format in the
    results schema (its `format`, else its `type`; "" where the schema says nothing)."""
    found: list[tuple[list[Any], Any, str]] = []

    def walk(node: Any, path: list[Any], sub: Any) -> None:
        sub = sub if isinstance(sub, dict) else {}
        if isinstance(node, list):
            for i, x in enumerate(node):
                walk(x, [*path, i], sub.get("items"))
        elif isinstance(node, dict):
            props = sub.get("properties") or {}
            for k, x in node.items():
                walk(x, [*path, k], props.get(k))
        else:
            found.append((path, node, str(sub.get("format") or sub.get("type") or "")))

    walk(data, [], schema)
    return found


def _set(data: Any, path: list[Any], value: Any) -> Any:
    if not path:
        return value
    copy = list(data) if isinstance(data, list) else dict(data)
    copy[path[0]] = _set(data[path[0]], path[1:], value)
    return copy


def _data_edits(run: Run, how: str, move: Move, most: int = 3) -> list[Edit] | Refusal:
    found = _response(run)
    if isinstance(found, Refusal):
        return found
    at, response, schema = found
    data = response.get("retrieved_data")
    if not data:
        return Refusal("the reference response retrieves no data")
    edits: list[Edit] = []
    for path, value, fmt in _items(data, schema):
        moved = move(value, fmt)
        if moved is None:
            continue
        to, why = moved
        edited = {**response, "retrieved_data": _set(data, path, to)}
        where = "".join(f"[{p!r}]" for p in path)
        edits.append(
            Edit(
                f"{len(edits)}",
                _respond_with(run, at, edited),
                f"retrieved_data{where}: {value!r} -> {to!r} ({why}; {fmt or 'no format'})",
                {"answer_edit": how, "value": value, "to": to, "at": where, "format": fmt},
            )
        )
        if len(edits) == most:
            break
    return edits or Refusal(f"no retrieved value has a {how} edit verimut can make (formats: {_kinds(data, schema)})")


def _kinds(data: Any, schema: Any) -> str:
    return ", ".join(sorted({f or type(v).__name__ for _, v, f in _items(data, schema)})) or "none"


@declare(FamilySpec(grammars=EVIDENCE, mechanism="accept a wrong answer"))
def data_wrong(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """One retrieved value moved to another legal value of its kind (up to three variants)."""
    return _data_edits(run, "wrong", wrong)


@declare(
    FamilySpec(grammars=EVIDENCE, mechanism="accept an answer whose value only contains the right one"),
)
def data_superstring(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """One retrieved value replaced by a different value that contains it."""
    return _data_edits(run, "superstring", superstring)


@declare(FamilySpec(grammars=EVIDENCE, mechanism="accept an answer that names two candidates"))
def data_hedge(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """One retrieved value given with a second candidate."""
    return _data_edits(run, "hedge", hedge)


@declare(
    FamilySpec(grammars=EVIDENCE, mechanism="accept a value beyond the comparison's documented tolerance"),
)
def data_near_miss(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """A distance, duration, date or amount moved just past the tolerance the package documents for it."""
    return _data_edits(run, "near-miss", near_miss)


@declare(FamilySpec(grammars=EVIDENCE, mechanism="accept an answer with an item not asked for"))
def data_extra_item(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The retrieved list with one more item: a copy of its last, moved to another value (or named apart)."""
    found = _response(run)
    if isinstance(found, Refusal):
        return found
    at, response, schema = found
    data = response.get("retrieved_data")
    if not isinstance(data, list) or not data:
        return Refusal("the reference response retrieves no list")
    last = data[-1]
    extra: Any = None
    for path, value, fmt in _items([last], schema):
        moved = wrong(value, fmt) or superstring(value, fmt)
        if moved is not None:
            extra = _set([last], path, moved[0])[0]
            break
    if extra is None:
        return Refusal("the list's last item has no value verimut can move")
    if extra in data:
        return Refusal("the extra item verimut would add is already in the list")
    edited = {**response, "retrieved_data": [*data, extra]}
    return [
        Edit(
            "-",
            _respond_with(run, at, edited),
            f"retrieved_data: one more item, {extra!r}",
            {"answer_edit": "extra-item", "to": extra},
        )
    ]


@declare(FamilySpec(grammars=EVIDENCE, mechanism="accept a response with the wrong status"))
def answer_status(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The response's status moved to another legal one (success to each error, an error to success and to
    another error); task type and data kept."""
    found = _response(run)
    if isinstance(found, Refusal):
        return found
    at, response, _ = found
    status = str(response.get("status", "")).upper()
    if status not in STATUSES:
        return Refusal(f"the reference status {status!r} is none of the package's")
    others = [s for s in STATUSES if s != status]
    if status != "SUCCESS":
        others = ["SUCCESS", *[s for s in others if s != "SUCCESS"][:1]]
    return [
        Edit(
            s.lower(),
            _respond_with(run, at, {**response, "status": s}),
            f"status: {status} -> {s}",
            {"answer_edit": "status", "value": status, "to": s},
        )
        for s in others[:3]
    ]


# --- writes: a wrong one before the right one, a pinned field wrong, another task's write first ---------------
def _pinned_moves(action: Action, instruction: str) -> list[tuple[str, list[str], Any, Any, str]]:
    """(field, its path of keys, value, wrong value, why) for each post-data field the task pins exactly and
    whose value its instruction states (a title, a name, a price): a value read off the site (an id, a forum, an
    option code) has no other value known to exist, so it is left alone."""
    body = action.args.get("post_data")
    if not isinstance(body, dict):
        return []
    moves = []
    for entry in action.args.get("pinned") or ():
        path = [str(p) for p in entry] if isinstance(entry, list) else [str(entry)]
        value: Any = body
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is None or isinstance(value, (dict, list)) or not stated(value, instruction):
            continue
        moved = wrong(value)
        if moved is None and isinstance(value, str) and value.strip():
            moved = (f"{value}-2", "another name of the same shape")
        if moved is not None:
            moves.append((".".join(path), path, value, moved[0], moved[1]))
    return moves


def stated(value: Any, instruction: str) -> bool:
    """Whether the instruction states the value: a number as a number, a text (3+ characters) anywhere in it."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return states_number(instruction, float(value))
    text = str(value).strip()
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return states_number(instruction, float(text))
    if len(text) < 3 or not re.search(rf"(?<!\w){re.escape(text.lower())}(?!\w)", instruction.lower()):
        return False
    # A lowercase word the instruction happens to use ("url", "private") may be an option's code: a name is
    # quoted, or more than one word, or not all lowercase letters.
    return f'"{text}"' in instruction or " " in text or not text.isalpha() or not text.islower()


def _with_field(action: Action, path: list[str], value: Any) -> Action:
    def put(node: Any, keys: list[str]) -> Any:
        return value if not keys else {**node, keys[0]: put(node[keys[0]], keys[1:])}

    return Action(action.name, {**action.args, "post_data": put(action.args["post_data"], path)})


@declare(FamilySpec(grammars=EVIDENCE, mechanism="accept a wrong value"))
def wrong_post(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """One post-data field the task pins moved to another value of its kind, in the write (one variant per field)."""
    edits: list[Edit] = []
    for k in ctx.write_positions():
        for name, path, value, to, why in _pinned_moves(run.actions[k], ctx.instruction):
            actions = list(run.actions)
            actions[k] = _with_field(run.actions[k], path, to)
            edits.append(
                Edit(
                    f"{k}.{name}",
                    run.replace_actions(actions),
                    f"write #{k} {run.actions[k].name} {name}: {value!r} -> {to!r} ({why})",
                    {"position": k, "field": name, "value": value, "to": to},
                )
            )
    return edits or Refusal("no write has a post-data field the task pins exactly")


@declare(
    FamilySpec(
        grammars=EVIDENCE,
        tests_frame=True,
        side_effect=True,
        mechanism="accept a wrong write made before the right one",
    ),
)
def wrong_first(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The write made first with a pinned field wrong, then as the reference makes it (one variant per field).
    On a record the write updates, the right write overwrites the wrong one (the oracle finds it harmless);
    a wrong record created first stays."""
    edits: list[Edit] = []
    for k in ctx.write_positions():
        for name, path, value, to, why in _pinned_moves(run.actions[k], ctx.instruction):
            actions = list(run.actions)
            actions.insert(k, _with_field(run.actions[k], path, to))
            edits.append(
                Edit(
                    f"{k}.{name}",
                    run.replace_actions(actions),
                    f"write #{k} {run.actions[k].name} made first with {name}={to!r} ({why}), then as asked",
                    {"position": k, "field": name, "value": value, "to": to},
                )
            )
    return edits or Refusal("no write has a post-data field the task pins exactly")


@declare(
    FamilySpec(
        grammars=EVIDENCE,
        tests_frame=True,
        side_effect=True,
        needs_out_of_scope=True,
        mechanism="accept an out-of-scope write",
    ),
)
def oos_before(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """Another task's write (of the same site) made before this run's first write; `extra-oos` makes it after."""
    writes = ctx.write_positions()
    if not writes:
        return Refusal("the reference run has no write")
    if not ctx.out_of_scope:
        return Refusal(
            f"no write of another task of the site changes anything outside this task's effect ({ctx.out_of_scope_tried} tried)"
        )
    edits: dict[str, Edit] = {}
    for c in ctx.out_of_scope:
        variant = f"{c.action.name}@{c.touches[0].removesuffix(NEW)}"  # as extra-oos names its variants
        if variant in edits:
            continue
        actions = list(run.actions)
        actions.insert(writes[0], c.action)
        edits[variant] = Edit(
            variant,
            run.replace_actions(actions),
            f"inserted {c.source_task}'s #{c.source_action} {c.action.describe()} before the first write: changes {c.changes}",
            {
                "source_task": c.source_task,
                "source_action": c.source_action,
                "tool": c.action.name,
                "collection": c.touches[0],
            },
        )
    return list(edits.values())


# --- alternatives: what the task itself accepts besides the reference ----------------------------------------
LISTED = 3  # alternatives tried per request or value: bounded, so the cost grows with the run, not the dataset
SHORTEST = 3  # an alternative text shorter than this is not put back by text substitution (it may sit elsewhere)


@declare(FamilySpec(grammars=EVIDENCE, role=ALTERNATIVE))
def alt_listed(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """The task's own alternatives in place of the first: another URL its evaluator lists for a request, another
    value it lists for a retrieved item. The oracle compares end states with the reference's texts put back."""
    edits: list[Edit] = []
    for k, a in enumerate(run.actions):
        for n, url in enumerate((a.args.get("listed") or [])[:LISTED] if a.name != RESPOND else []):
            if not isinstance(url, str) or url == a.args.get("url"):
                continue
            actions = list(run.actions)
            actions[k] = Action(a.name, {**a.args, "url": url})
            edits.append(
                Edit(
                    f"{k}.url.{n + 1}",
                    run.replace_actions(actions),
                    f"request #{k} {a.name} to {url} (the task lists it) instead of {a.args.get('url')}",
                    {"position": k, RESTORE: {url: a.args["url"]}},
                )
            )
    found = _response(run)
    if not isinstance(found, Refusal):
        at, response, _ = found
        for path, alternatives in run.actions[at].args.get("listed") or []:
            for n, value in enumerate(alternatives[:LISTED]):
                was = _get(response.get("retrieved_data"), path)
                if not isinstance(value, str) or not isinstance(was, str) or len(value) < SHORTEST or value == was:
                    continue
                edited = {**response, "retrieved_data": _set(response["retrieved_data"], list(path), value)}
                where = "".join(f"[{p!r}]" for p in path)
                edits.append(
                    Edit(
                        f"data{where}.{n + 1}",
                        _respond_with(run, at, edited),
                        f"retrieved_data{where}: {value!r}, which the task lists, instead of {was!r}",
                        {RESTORE: {value: was}},
                    )
                )
    return edits or Refusal("the task lists no alternative URL or value (text) for this run")


@declare(FamilySpec(grammars=EVIDENCE, role=ALTERNATIVE))
def alt_query(run: Run, ctx: FaultContext) -> list[Edit] | Refusal:
    """A query parameter the task's evaluator declares it ignores (`ignored_query_params`, or a one-word pattern)
    added to the request it grades (one variant per request)."""
    edits: list[Edit] = []
    for k, a in enumerate(run.actions):
        names = a.args.get("ignored_query") or []
        url = a.args.get("url")
        if not names or not isinstance(url, str):
            continue
        name = str(names[0])
        if re.search(rf"[?&]{re.escape(name)}=", url):
            continue
        moved = f"{url}{'&' if '?' in url else '?'}{name}=2"
        actions = list(run.actions)
        actions[k] = Action(a.name, {**a.args, "url": moved})
        edits.append(
            Edit(
                f"{k}.{name}",
                run.replace_actions(actions),
                f"request #{k} {a.name} with {name}=2, a parameter the task's evaluator ignores",
                {"position": k, RESTORE: {moved: url}},
            )
        )
    return edits or Refusal("no request of the run has a query parameter its evaluator declares it ignores")


def _get(data: Any, path: list[Any]) -> Any:
    for p in path:
        try:
            data = data[p]
        except (KeyError, IndexError, TypeError):
            return None
    return data
