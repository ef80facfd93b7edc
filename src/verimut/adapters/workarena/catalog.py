"""WorkArena's service-catalog ordering tasks (the `Order...Task` classes), with their real validator, in Chromium.

Facts this relies on (browsergym-workarena 0.5.3, tasks/service_catalog.py and api/requests.py):
- the catalog tasks are those WorkArena's own registry files under "service catalog" (TASK_CATEGORY_MAP),
  nine `OrderHardwareTask` subclasses; each ships configurations (`config_path`): the item, its
  short description, the quantity, and a value for every variable of the item ("configuration");
- `setup()` creates a user, logs in as that user and opens the catalog's home page in `gsft_main`;
- `validate(page, chat)` reads the request id from the top window's URL (`sysparm_sys_id`), sleeps 3 s,
  reads the request, its requested items (`sc_req_item`) and their options through the Table API, and
  checks: exactly one item, its short description, its quantity, and each requested variable (a checkbox
  or radio by a loose match, a textarea by containment: the requested text anywhere in the stored text).

A catalog task is audited with the form grammar (verimut.core.forms): its fields are the item's variables
(named by their question text) plus `quantity`, all of them requested, and its submit is the order. The
run is the adapter's own Playwright steps, one per BrowserGym step, not `cheat()`: `open_item` (a read:
the "Hardware" link, then the item's heading, as cheat does), one `set_field` per requested value, then
`submit` (the order button; the top window navigates to the checkout page whose URL carries the request).

The end state is an independent Table API readback, before the validator runs, of what the episode's
user created: requests, requested items (short description, quantity) and options (value, keyed by
their item and question). Task ids are `PROTOCOL/SLUG-CONFIG`, e.g. `once-after-submit/order-ipad-mini-0`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from verimut.core import forms
from verimut.core.benchmark import Verdict
from verimut.core.errors import AuditError
from verimut.core.run import Action, Run, Step

# `bench` below is the WorkArena adapter and `episode` its Episode (verimut.adapters.workarena): typed Any
# here because that package imports this module (its hooks), and an import back would be a cycle.
DEFAULT_CONFIGS = (0, 1, 2)  # the paper's configuration indices
OPEN_ITEM = "open_item"  # a read: navigate from the catalog's home to the item's page
QUANTITY = "quantity"
TABLES = ("sc_request", "sc_req_item", "sc_item_option", "sc_item_option_mtom")
_PREFIX = "workarena.servicenow."
STEP_TIMEOUT_MS = 10_000


@cache
def classes() -> dict[str, Any]:
    """Slug (e.g. "order-ipad-mini") -> task class: WorkArena's registered atomic tasks in its "service catalog" category."""
    import browsergym.workarena as wa  # type: ignore[import-untyped]

    return {
        c.get_task_id().removeprefix(_PREFIX): c
        for c in wa.ATOMIC_TASKS
        if wa.TASK_CATEGORY_MAP.get(c.get_task_id()) == "service catalog"
    }


def configs_option(spec: str | None) -> tuple[int, ...]:
    """The `catalog_configs` option ("0,1,2"): which configurations of every catalog task."""
    if not spec:
        return DEFAULT_CONFIGS
    if not re.fullmatch(r"\d+(,\d+)*", spec):
        raise AuditError(f"catalog_configs: cannot read {spec!r} (like 0,1,2)")
    return tuple(int(i) for i in spec.split(","))


def tasks(protocols: Sequence[str], configs: Sequence[int]) -> list[str]:
    return [f"{p}/{slug}-{i}" for p in protocols for slug in classes() for i in configs]


def parse(task: str) -> tuple[str, str, int] | None:
    """(protocol, slug, config index) of a catalog task id, or None when it is not one."""
    protocol, _, rest = task.partition("/")
    slug, _, index = rest.rpartition("-")
    if slug not in classes() or not index.isdigit():
        return None
    return protocol, slug, int(index)


def is_catalog(task: str) -> bool:
    return parse(task) is not None


def _parsed(task: str) -> tuple[str, str, int]:
    found = parse(task)
    if found is None:
        raise AuditError(f"not a WorkArena catalog task: {task!r}")
    return found


def config(slug: str, index: int) -> dict[str, Any]:
    shipped = classes()[slug].all_configs()
    if index >= len(shipped):
        raise AuditError(f"WorkArena's {slug} task has {len(shipped)} configurations, not {index + 1}")
    return dict(shipped[index])


def _text(value: Any) -> str:
    from verimut.adapters.workarena.catalog_standin import as_text

    return as_text(value)


def instruction(task: str) -> str:
    """The goal text OrderHardwareTask.setup_goal() builds, from the configuration alone (no browser)."""
    _, slug, index = _parsed(task)
    c = config(slug, index)
    goal = f'Go to the hardware store and order {c["quantity"]} "{c["item"]}"'
    if c["configuration"]:
        wanted = {k: v[1] for k, v in c["configuration"].items()}
        goal += f" with configuration {wanted}"
    return goal


# --- an episode ------------------------------------------------------------------------------------


def reset(bench: Any, task: str) -> Any:
    """Set the task up as WorkArena does (a new user, logged in, on the catalog's home page): a new episode."""
    protocol, slug, index = _parsed(task)
    browser = bench._ensure_browser()
    bench._teardown_live()
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    wa_task = classes()[slug](seed=bench.seed, instance=bench.instance, fixed_config=config(slug, index))
    episode = bench.episode_type(task, protocol, slug, wa_task, context, page, "", "", os.getpid())
    bench._live = episode
    bench.fresh_user_names()
    goal, _ = wa_task.setup(page=page)
    episode.goal, episode.user = goal, wa_task._base_user_name
    wa_task._wait_for_ready(page)
    return episode


def _iframe(episode: Any) -> Any:
    return episode.page.frame_locator(f'iframe[name="{episode.task.js_prefix}"]')


def _navigate(episode: Any, click: Any) -> None:
    """Click something that loads a new page in gsft_main; wait until WorkArena's scripts say it is loaded."""
    page = episode.page
    before = page.evaluate_handle("() => window.gsft_main.document")
    click()
    page.wait_for_function(
        "old => window.gsft_main && window.gsft_main.document !== old && window.gsft_main.WORKARENA_LOAD_COMPLETE",
        arg=before,
        timeout=STEP_TIMEOUT_MS,
    )


def _open_item(episode: Any) -> None:
    iframe, item = _iframe(episode), episode.task.requested_item
    _navigate(episode, lambda: iframe.locator("a", has_text="Hardware").first.click())
    _navigate(episode, lambda: iframe.locator("h2", has_text=item).first.click())
    episode.page.wait_for_function(f"window.{episode.task.form_js_selector}", timeout=STEP_TIMEOUT_MS)


def _variables(episode: Any) -> dict[str, str]:
    """Question text -> the variable's element id, from the page's own g_form."""
    return dict(
        episode.page.evaluate(
            f"""() => {{ const g = window.{episode.task.form_js_selector};
                return g.getEditableFields().map(n => [g.getLabelOf(n), n]); }}"""
        )
    )


def _shown(episode: Any) -> dict[str, str]:
    """Every variable's value as the item page shows it now, and the quantity."""
    ids = _variables(episode)
    values = episode.page.evaluate(
        f"ids => Object.fromEntries(ids.map(n => [n, window.{episode.task.form_js_selector}.getValue(n)]))",
        list(ids.values()),
    )
    shown = {q: str(values.get(n, "")) for q, n in ids.items()}
    shown[QUANTITY] = str(_iframe(episode).locator("#quantity").input_value())
    return shown


def facts(bench: Any, task: str) -> forms.FormFacts:
    """The census's facts: the item's variables and quantity, their on-page defaults, the requested values.

    One fresh item page is read: it shows no generated value (unlike a form's record number).
    """
    episode = reset(bench, task)
    _open_item(episode)
    shown = _shown(episode)
    c = episode.task.config
    requested = {q: _text(v) for q, (_, v) in c["configuration"].items()}
    kinds = {q: k for q, (k, _) in c["configuration"].items()}
    listed = [forms.FormField(QUANTITY, "Quantity", "integer", shown[QUANTITY], str(c["quantity"]), _other_quantity(c))]
    for q in shown:
        if q == QUANTITY:
            continue
        kind = kinds.get(q, "")
        listed.append(
            forms.FormField(q, q, kind, shown[q], requested.get(q), _other(episode.task, q, requested.get(q)))
        )
    bench._teardown(episode)
    return forms.FormFacts("sc_req_item", [QUANTITY, *requested], listed)


def _other_quantity(c: dict[str, Any]) -> str:
    from verimut.adapters.workarena.catalog_standin import QUANTITIES

    q = int(c["quantity"])
    return str(q + 1 if str(q + 1) in QUANTITIES else q - 1)


def _other(wa_task: Any, question: str, requested: str | None) -> str | None:
    """Another legal value of a requested variable, from the values its shipped configurations give it.

    A list-valued text (every shipped value is a ", "-joined pick from one small vocabulary, like the
    laptops' "Additional software requirements") gets the requested picks plus the first unrequested one:
    a legal value that differs from the request while containing it, since validate() tests a textarea by
    containment. Any other variable gets the first different shipped value.
    """
    if requested is None:
        return None
    shipped: list[str] = []
    for c in wa_task.all_configs:
        kind, value = c["configuration"].get(question, (None, None))
        if kind is not None and _text(value) not in shipped:
            shipped.append(_text(value))
    vocabulary = list(dict.fromkeys(p for v in shipped for p in v.split(", ")))
    if len(vocabulary) < len(shipped):  # the picks recombine: a list-valued text
        extra = next((p for p in vocabulary if p not in requested.split(", ")), None)
        return f"{requested}, {extra}" if extra else None
    return next((v for v in shipped if v != requested), None)


def reference(episode: Any) -> Run:
    c = episode.task.config
    sets = [Action(forms.SET_FIELD, {"field": QUANTITY, "value": str(c["quantity"])})]
    sets += [Action(forms.SET_FIELD, {"field": q, "value": _text(v)}) for q, (_, v) in c["configuration"].items()]
    return Run((Action(OPEN_ITEM), *sets, Action(forms.SUBMIT)), f'I have ordered {c["quantity"]} "{c["item"]}".')


def execute(bench: Any, episode: Any, action: Action) -> Step:
    known = (OPEN_ITEM, *forms.FORM_ACTIONS)
    if action.name not in known:
        return Step("", f"unknown catalog action {action.name!r} (known: {', '.join(known)})")
    try:
        output = "opened the item's page"
        if action.name == OPEN_ITEM:
            _open_item(episode)
        if action.name in (forms.SET_FIELD, forms.SET_FIELD_THEN_SUBMIT):
            _set(episode, str(action.args["field"]), str(action.args["value"]))
            output = "set"
        if action.name in (forms.SUBMIT, forms.SET_FIELD_THEN_SUBMIT):
            output = _order(episode)
    except Exception as e:  # noqa: BLE001  (a step the page refused: that cell's delivery failed)
        return Step("", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    episode.steps += 1
    if episode.protocol == "per-step":
        bench._validate_step(episode, [])
    return Step(output)


def _set(episode: Any, name: str, value: str) -> None:
    """Set one variable (or the quantity) as WorkArena's cheat() does for its control type."""
    from browsergym.workarena.tasks.utils.form import fill_text  # type: ignore[import-untyped]

    iframe, page, g = _iframe(episode), episode.page, episode.task.form_js_selector
    if name == QUANTITY:
        iframe.locator("#quantity").select_option(value)
        return
    ident = _variables(episode).get(name)
    if ident is None:
        raise LookupError(f"the item has no variable {name!r}")
    kind = page.evaluate(f"{g}.getControl({ident!r}).type")
    if kind == "radio":
        ids = page.evaluate(
            f"Array.prototype.map.call({g}.getControls({ident!r}), c => [c.id, c.parentElement.innerText])"
        )
        # The page may add text after a choice's label (ServiceNow shows prices): cheat() matches a prefix too.
        control = next((i for i, text in ids if text.strip().startswith(value)), None)
        if control is None:
            raise LookupError(f"{name!r} has no choice {value!r}")
        iframe.locator(f'label[for="{control}"]').click()
    elif kind == "hidden":  # a checkbox: a hidden value toggled by its label
        if page.evaluate(f"{g}.getControl({ident!r}).value") != value.lower():
            iframe.locator(f'label[id="ni.{ident}_label"]').click()
    elif kind in ("textarea", "text"):
        fill_text(page=page, iframe=iframe, input_field=iframe.locator(f'[id="{ident}"]'), value=value)
    elif kind == "select-one":
        iframe.locator(f'[id="{ident}"]').select_option(value)
    else:
        raise ValueError(f"unknown control type {kind!r} for {name!r}")


def _order(episode: Any) -> str:
    page = episode.page
    _iframe(episode).locator("#oi_order_now_button").click()
    try:  # the top window navigates to the checkout page; its URL carries the request's id
        page.wait_for_url(re.compile("sysparm_sys_id"), timeout=STEP_TIMEOUT_MS)
        episode.task._wait_for_ready(page)
    except Exception:  # noqa: BLE001  (the page stayed: no order was placed)
        return "ordered; the page did not navigate (no request id in its URL)"
    return "ordered; the checkout page's URL carries the request id"


def snapshot(bench: Any, episode: Any) -> dict[str, Any]:
    """The independent readback of what the episode's user created: requests, requested items, options.

    Records are keyed by creation order ("1" is the episode's first request or item); an option is keyed
    by its item's key and its question, so a diff names the variable that differs.
    """
    from browsergym.workarena.api.utils import table_api_call  # type: ignore[import-untyped]

    def read(table: str, fields: str, query: str = "") -> list[dict[str, Any]]:
        params = {
            "sysparm_query": query or f"sys_created_by={episode.user}^ORDERBYsys_created_on",
            "sysparm_fields": fields,
            "sysparm_display_value": "false",
        }
        return list(table_api_call(instance=bench.instance, table=table, params=params)["result"])

    requests = read("sc_request", "sys_id,request_state")
    items = read("sc_req_item", "sys_id,request,short_description,quantity")
    links = read("sc_item_option_mtom", "request_item,sc_item_option")
    options = {r["sys_id"]: r for r in read("sc_item_option", "sys_id,item_option_new,value")}
    questions: dict[str, str] = {}
    for found_option in options.values():
        q = found_option.get("item_option_new", "")
        if q and q not in questions:
            found = read("item_option_new", "question_text", f"sys_id={q}")
            questions[q] = str(found[0].get("question_text", q)) if found else q
    request_key = {r["sys_id"]: str(n) for n, r in enumerate(requests, 1)}
    item_key = {r["sys_id"]: str(n) for n, r in enumerate(items, 1)}
    out_options: dict[str, dict[str, Any]] = {}
    for link in links:
        option = options.get(link.get("sc_item_option", ""))
        if option is not None:
            item = item_key.get(link.get("request_item", ""), "?")
            out_options[f"{item}/{questions.get(option.get('item_option_new', ''), '?')}"] = {
                "value": option.get("value")
            }
    return {
        "sc_request": {request_key[r["sys_id"]]: {"request_state": r.get("request_state")} for r in requests},
        "sc_req_item": {
            item_key[r["sys_id"]]: {
                "request": request_key.get(r.get("request", ""), "?"),
                "short_description": r.get("short_description"),
                "quantity": r.get("quantity"),
            }
            for r in items
        },
        "sc_item_option": out_options,
    }


def verify_as(bench: Any, task: str, episode: Any, chat: list[dict[str, str]]) -> Verdict:
    """Task `task`'s validator on another task's episode (the swap grid), once after the run.

    A fresh task object of the catalog task's class and configuration; WorkArena's own `setup_goal()`
    sets what `validate()` compares (item, short description, quantity, requested configuration) from
    the configuration alone, without touching the page. `validate()` is unchanged: it reads the request
    id from the episode's top window URL and the request through the Table API, so it needs nothing from
    the session that set the page up (no browser-local key, unlike a form's validator).
    """
    _, slug, index = _parsed(task)
    validator = classes()[slug](seed=bench.seed, instance=bench.instance, fixed_config=config(slug, index))
    validator.setup_goal(page=episode.page)
    reward, _, _, info = validator.validate(episode.page, chat)
    return Verdict(
        reward == 1,
        f"once-after-submit: {type(validator).__name__}.validate() of {task}, on the page of "
        f"{episode.task_id}: reward {reward:g}, {info.get('message', '')}",
    )


def verifier_source(task: str) -> tuple[str, int, str] | None:
    """Where the validator is defined (for SARIF): OrderHardwareTask.validate()."""
    import inspect

    _, slug, _ = _parsed(task)
    validate = classes()[slug].validate
    try:
        path = inspect.getsourcefile(validate)
        line = inspect.getsourcelines(validate)[1]
    except (OSError, TypeError):
        return None
    return (path, line, validate.__qualname__) if path else None


EXPLAIN = (
    "OrderHardwareTask.validate() reads the request named in the page URL and checks only its one item's "
    "short description, quantity and requested variables (a textarea by containment); nothing else the "
    "user ordered or changed"
)
