"""WorkArena (PyPI `browsergym-workarena==0.5.3`): its form tasks, with the real validator, in headless Chromium.

Facts this adapter relies on (checked against browsergym-workarena 0.5.3, tasks/form.py):
- the form templates are the L1 tasks of WorkArena's registry whose validator is
  `GenericNewRecordTask.validate` (`form_templates()`: incident, change request, hardware asset,
  problem, user); each is set up with one of its 1,000 shipped configurations (`fixed_config`):
  `task_fields` and a `template_record` whose values they ask for;
- some templates make a few values unique per task object (`unique_valued_fields`: the hardware
  asset's serial number, the user's names and email) with a uuid4, an unseeded Faker and Python's
  salted `hash`; the adapter pins them per configuration (`_pin_unique`), so the reference run
  recorded in one process is the one the validator of another expects;
- `setup()` creates a user, logs in as that user, opens the form in the `gsft_main` iframe and injects
  page scripts: one wraps `gsftSubmit` to store the new record's sys_id in localStorage under a key that
  holds the Python `id()` of the task object (so one task object runs the episode and validates it), one
  sets the page-local flag `WORKARENA_BAD_FIELD_CHANGED` when a field outside `task_fields` changes;
- `validate(page, chat)` checks the URL, reads that flag, reads the sys_id, GETs the record through the
  Table API and compares only `task_fields`; submit navigates the iframe, so the flag is gone after it.

Runs are steps of the form vocabulary (`verimut.core.forms`): `set_field` fills one field the way WorkArena's
own `_fill_fields` does (label locator; select for choices, check for booleans, WorkArena's `fill_text`
otherwise), then moves focus on as a user does (a text field's `change` fires on blur); `submit` clicks
the insert button and waits for the iframe's next page. These are the adapter's own Playwright steps,
not `cheat()`: the fault families need to drop, add and regroup single field writes.

The two validation protocols are two suites (a task id is `PROTOCOL/FORM-CONFIG`):
- `once-after-submit`: `validate()` once, after the whole run (the paper's protocol);
- `per-step`: `validate()` after every step, as BrowserGym's env does; the episode ends at the first
  step it reports done (the later steps are not executed), and the final claim is one more step.

The intent-swap census (`verify_as`) grades once after the run, with the other task's validator put
in the run's session: it reads the localStorage key the run's submit hook wrote (see `verify_as`). The
grid pairs form and catalog tasks (every task is of the kind "user"); a catalog validator needs no key.
Validators only read the page and the instance (`grades_in_place`): each run of the grid is replayed
once and graded there by every validator of its column, and verimut checks after each that the
readback is unchanged. On a live instance that is 42 replays for the 1,764 cells, not 1,764.

The end state is an independent Table API readback, before the validator runs: every record of the
form's table created by the episode's user (raw stored values, the form's fields). Each episode is
torn down (the task's own teardown, then whatever the readback still finds, then the user) when the
next one starts, after its own verdict, when verimut releases it (`close`), or when the process exits.
One episode is live at a time in a process. On a live instance the adapter asks for one cell at a time
(`concurrency = 1`): the instance is shared state. The stand-in asks for none: each worker process (the manifest's
and the scorer's) starts its own Chromium, and each episode its own user, whose records are all its readback
reads, so cells on the cores are as apart as cells one after another (issue 44).
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.metadata
import logging
import os
import re
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

import msgspec

from verimut.adapters.base import require, unknown_task
from verimut.adapters.workarena import catalog as wa_catalog  # the catalog tasks: catalog.py
from verimut.core import forms
from verimut.core.benchmark import Verdict
from verimut.core.children import at_child_exit
from verimut.core.errors import AuditError
from verimut.core.run import Action, Run, Step

VERSION = "0.5.3"
PROTOCOLS = ("once-after-submit", "per-step")
# The configurations audited by default, for every form template (the paper's indices 0-2); the
# `configs` option (`--option configs="incident:0,1;change_request:0"`) audits others.
DEFAULT_INDICES = (0, 1, 2)
SEED = 7001  # the paper's reset seed
CHROMIUM = "/usr/bin/chromium"
# Headless Debian Chromium on a closed network: no GPU, no QUIC, no background or update traffic.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STEP_TIMEOUT_MS = 10_000  # WorkArena's task timeout; a submit that does not navigate stops waiting here
log = logging.getLogger(__name__)


@dataclass
class Episode:
    task_id: str
    protocol: str
    form: str
    task: Any  # the WorkArena task object: it runs the episode and validates it (localStorage key is its id())
    context: Any
    page: Any
    goal: str
    user: str
    pid: int
    steps: int = 0
    # Per-step protocol: the validator's answer after each step, and the step that ended the episode.
    verdicts: list[tuple[float, bool, str]] = field(default_factory=list)
    ended_at: int | None = None
    closed: bool = False


@cache
def form_templates() -> dict[str, Any]:
    """WorkArena's form templates, from its own registry, by name ("incident", "hardware_asset", ...).

    The L1 tasks whose validator is `GenericNewRecordTask.validate`; the name is the task id's
    part after "create-" (`workarena.servicenow.create-hardware-asset` -> "hardware_asset").
    """
    import browsergym.workarena as wa  # type: ignore[import-untyped]
    from browsergym.workarena.tasks.form import GenericNewRecordTask  # type: ignore[import-untyped]

    l1 = set(wa.workarena_tasks_l1)
    found: dict[str, Any] = {}
    for cls in wa.ATOMIC_TASKS:
        task_id = cls.get_task_id()
        if task_id in l1 and getattr(cls, "validate", None) is GenericNewRecordTask.validate:
            found[task_id.rsplit(".", 1)[-1].removeprefix("create-").replace("-", "_")] = cls
    return found


def _configs(spec: str | None = None) -> dict[str, tuple[int, ...]]:
    """The `configs` option ("incident:0,1;change_request:0") as form -> config indices (default: 0-2 of each)."""
    if not spec:
        return {name: DEFAULT_INDICES for name in form_templates()}
    out: dict[str, tuple[int, ...]] = {}
    for part in filter(None, spec.split(";")):
        name, _, idx = part.partition(":")
        if name not in form_templates() or not re.fullmatch(r"\d+(,\d+)*", idx):
            raise AuditError(
                f"configs: cannot read {part!r} (like incident:0,1;change_request:0; "
                f"forms: {', '.join(form_templates())})"
            )
        out[name] = tuple(int(i) for i in idx.split(","))
    return out


def form_task_ids(configs: Mapping[str, Sequence[int]]) -> list[str]:
    """The form tasks: every protocol x form template x configuration, as `PROTOCOL/FORM-CONFIG`."""
    return [f"{p}/{form}-{i}" for p in PROTOCOLS for form, idx in configs.items() for i in idx]


def _task_class(form: str) -> Any:
    return form_templates()[form]


# A field whose WorkArena rule uses Python's per-process salted `hash` (CreateUserTask's user_name):
# pinned to the configuration's digest instead, in the same shape (a string of digits).
_SALTED = frozenset({"user_name"})


def _pin_unique(task: Any, key: str, template: Mapping[str, Any]) -> None:
    """Make the task's unique-per-object values a function of its configuration (`key`, e.g. "user-0").

    WorkArena draws them per task object (a uuid4, an unseeded Faker, a salted hash), so a reference
    run recorded in one process would not be the one a validator built in another process expects.
    WorkArena's own rules still make them, in their order (the user's email is made from the names).
    """
    if not task.unique_valued_fields:
        return
    from browsergym.workarena.tasks import form as wa_form  # type: ignore[import-untyped]

    digest = hashlib.sha256(f"verimut/workarena/{key}".encode()).digest()
    task.unique_id = str(uuid.UUID(bytes=digest[:16]))
    wa_form.fake.seed_instance(int.from_bytes(digest[:8], "big"))
    task.template_record = dict(template)
    for name, make in task.unique_valued_fields.items():
        made = make(template[name])
        task.template_record[name] = str(int.from_bytes(digest[16:24], "big")) if name in _SALTED else made


def catalog_tasks_option(value: str | None) -> str:
    """The `catalog` option: "only", "none", or "" (form and catalog tasks)."""
    if value in (None, "", "both"):
        return ""
    if value not in ("only", "none"):
        raise AuditError(f"catalog: {value!r} is not one of only, none, both")
    return str(value)


def _chromium_version() -> str:
    try:
        done = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except OSError:
        return "missing"
    return done.stdout.strip() or "unknown"


class WorkArena:
    name = "workarena"
    # One kind of task, graded on the requested effect (docs/adapters.md#contracts).
    contracts: ClassVar[Mapping[str, str]] = {"user": "effect"}
    seed = SEED
    episode_type = Episode  # for catalog.py, which cannot import this module back
    telemetry: Sequence[str] = ()
    grammar = "form"  # audited with the form fault families (faults.py)
    concurrency: int | None = 1  # cells one at a time on a live instance (shared state); the stand-in: None
    # The swap grid grades once after the run: under per-step validation the run's own validator
    # decides when its episode ends, so another task's validator cannot be put in its place.
    swap_suites = ("once-after-submit",)
    # Validators read the page URL, localStorage and the Table API, and write nothing: a swap column's one
    # replay is graded by every validator in place (the scorer checks the readback after each).
    grades_in_place = True

    def __init__(
        self,
        url: str,
        credentials: tuple[str, str],
        *,
        stand_in: bool = False,
        configs: str | None = None,
        catalog: str | None = None,
        catalog_configs: str | None = None,
    ) -> None:
        from browsergym.workarena.instance import SNowInstance  # type: ignore[import-untyped]

        self.stand_in = stand_in
        if stand_in:
            self.concurrency = None  # a browser per worker process, a user per episode (the module's docstring)
        self.version = f"{VERSION}-stand-in" if stand_in else VERSION
        self.instance = SNowInstance(snow_url=url, snow_credentials=credentials)
        self.configs = _configs(configs)
        # Catalog tasks (catalog.py): `catalog` is "only" (no form task), "none" (no catalog task) or unset (both).
        self.catalog = catalog_tasks_option(catalog)
        self.catalog_configs = wa_catalog.configs_option(catalog_configs)
        self._pid = 0
        self._playwright: Any = None
        self._browser: Any = None
        self._live: Episode | None = None
        self._forms: dict[str, forms.FormFacts] = {}
        self._reads: dict[str, int] = {}  # fresh forms read per task
        atexit.register(self.close_all)

    # -- what there is ---------------------------------------------------------------------------
    def provenance(self) -> Mapping[str, str]:
        return {
            "browsergym-workarena": importlib.metadata.version("browsergym-workarena"),
            "playwright": importlib.metadata.version("playwright"),
            "chromium": _chromium_version(),
            "instance": (
                "stand-in: verimut's offline ServiceNow stand-in on loopback (reproduces the navigation "
                "mechanism, not ServiceNow)"
                if self.stand_in
                else "a live ServiceNow instance (SNOW_INSTANCE_URL)"
            ),
            "protocols": ", ".join(PROTOCOLS),
        }

    def tasks(self) -> Sequence[str]:
        # Hook: the catalog tasks (catalog.py) after the form tasks.
        found = [] if self.catalog == "only" else form_task_ids(self.configs)
        return found + ([] if self.catalog == "none" else wa_catalog.tasks(PROTOCOLS, self.catalog_configs))

    def _parse(self, task: str) -> tuple[str, str, int]:
        protocol, _, rest = task.partition("/")
        form, _, idx = rest.rpartition("-")
        if protocol not in PROTOCOLS or form not in form_templates() or not idx.isdigit():
            raise unknown_task("WorkArena", task, self.tasks()[0])
        return protocol, form, int(idx)

    def _config(self, form: str, index: int) -> dict[str, Any]:
        configs = _task_class(form).all_configs()
        if index >= len(configs):
            raise AuditError(f"WorkArena's {form} form has {len(configs)} configurations, not {index + 1}")
        return dict(configs[index])

    def _new_task(self, form: str, index: int) -> Any:
        """A WorkArena task object for one configuration, its unique values pinned (`_pin_unique`)."""
        config = self._config(form, index)
        task = _task_class(form)(seed=SEED, instance=self.instance, fixed_config=config)
        _pin_unique(task, f"{form}-{index}", self._config(form, index)["template_record"])
        return task

    def instruction(self, task: str) -> str:
        """The goal text GenericNewRecordTask.setup_goal() builds, from the configuration alone (no browser)."""
        from browsergym.workarena.tasks.utils.utils import prettyprint_enum  # type: ignore[import-untyped]

        if wa_catalog.is_catalog(task):  # hook: catalog tasks (catalog.py)
            return wa_catalog.instruction(task)
        _, form, index = self._parse(task)
        t = self._new_task(form, index)
        labels = self._config(form, index)["fields"]
        asks = [f'a value of "{t.template_record[f]}" for field "{labels[f]}"' for f in t.task_fields]
        return f"Create a new {t.table_label} with " + prettyprint_enum(asks) + "."

    # -- the browser ---------------------------------------------------------------------------------
    def _ensure_browser(self) -> Any:
        # First use in this process (a forked pool worker starts its own), or the browser crashed under the last
        # episode (that cell is recorded as its error; the next starts a new browser).
        if self._pid != os.getpid() or not self._browser.is_connected():
            from playwright.sync_api import sync_playwright

            if self._pid == os.getpid():  # crashed: its driver is this process's, and one runs per thread
                try:
                    self._playwright.stop()
                except Exception as e:  # noqa: BLE001  (a driver already gone has nothing left to stop)
                    log.debug("stopping the driver of a crashed browser: %s", e)
            self._live = None  # the parent's episode is the parent's to tear down (a crashed one is gone)
            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            if self._pid != os.getpid():  # a forked map's child runs no atexit hook: its last episode goes here
                at_child_exit(self.close_all)
            self._pid = os.getpid()
        return self._browser

    # -- an episode ----------------------------------------------------------------------------------
    @staticmethod
    def fresh_user_names() -> None:
        """Draw the next episode's user name afresh (WorkArena's setup() names its user from an unseeded Faker and
        the task's seeded `random`).

        Forked workers inherit one Faker state, so episodes running at once on two workers would create the same
        user: each snapshot (the user's records) would then see the other's, and one teardown delete the other's
        user. The name is never graded; only its uniqueness matters.
        """
        from browsergym.workarena.api import user as wa_user  # type: ignore[import-untyped]

        wa_user.fake.seed_instance(int.from_bytes(os.urandom(8), "big"))

    def reset(self, task: str) -> Episode:
        if wa_catalog.is_catalog(task):  # hook: catalog tasks (catalog.py)
            return wa_catalog.reset(self, task)
        protocol, form, index = self._parse(task)
        browser = self._ensure_browser()
        self._teardown_live()
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda m: console.append(m.text))
        wa_task = self._new_task(form, index)
        episode = Episode(task, protocol, form, wa_task, context, page, "", "", os.getpid())
        self._live = episode
        self.fresh_user_names()
        goal, _ = wa_task.setup(page=page)
        episode.goal, episode.user = goal, wa_task._base_user_name
        self._wait_for_monitor(page, console)
        # Read the form's fields with the task's own code, as cheat() does first (and as BrowserGym's first
        # per-step validation would): the validator's error messages use them.
        wa_task._get_fields(page)
        facts = self._describe(episode)
        self._reads[task] = self._reads.get(task, 0) + 1
        self._forms[task] = forms.settled(self._forms[task], facts) if task in self._forms else facts
        return episode

    def _wait_for_monitor(self, page: Any, console: list[str]) -> None:
        """Wait until WorkArena's page scripts have wrapped submit and bound the out-of-scope monitor."""

        def ready() -> bool:
            return any("patchSubmitButton" in m and "All done" in m for m in console) and any(
                "monitorChangeOnFields" in m and "finished loading" in m for m in console
            )

        waited = 0
        while not ready():
            if waited > STEP_TIMEOUT_MS:
                raise RuntimeError("WorkArena's page scripts did not run on the form (no monitor, no submit hook)")
            page.wait_for_timeout(50)
            waited += 50

    def _describe(self, episode: Episode) -> forms.FormFacts:
        """The form as the task found it: every editable field it can fill, its on-form default, the template's value."""
        t = episode.task
        shown = episode.page.evaluate(
            """fields => Object.fromEntries(fields.map(n => {
                const c = window.gsft_main.g_form.getControl(n);
                if (!c) return [n, ''];
                if (c.tagName === 'SELECT') return [n, c.value === '' ? '' : c.options[c.selectedIndex].text];
                if (c.type === 'checkbox') return [n, String(c.checked)];
                return [n, c.value];
            }))""",
            list(t.fields),
        )
        listed: list[forms.FormField] = []
        for name, info in t.fields.items():
            template = t.template_record.get(name)
            if isinstance(template, dict):
                template = template.get("display_value")
            kind = str(t.table_metadata[name]["type"])
            default = str(shown.get(name, ""))
            listed.append(forms.FormField(name, str(info.get("label", name)), kind, default, template))
        return forms.FormFacts(t.table_name, list(t.task_fields), listed)

    def form(self, task: str) -> forms.FormFacts:
        """The census's facts, from at least two fresh forms (so generated defaults are told apart)."""
        if wa_catalog.is_catalog(task):  # hook: catalog tasks (catalog.py)
            if task not in self._forms:
                self._forms[task] = wa_catalog.facts(self, task)
            return self._forms[task]
        while task not in self._forms or self._reads.get(task, 0) < 2:
            self.reset(task)
        return self._forms[task]

    def verifier_source(self, task: str) -> tuple[str, int, str] | None:
        """Where the validator is defined (for SARIF): the form tasks' shared validate()."""
        import inspect

        if wa_catalog.is_catalog(task):  # hook: catalog tasks (catalog.py)
            return wa_catalog.verifier_source(task)
        _, form, _ = self._parse(task)
        validate = _task_class(form).validate
        try:
            path = inspect.getsourcefile(validate)
            line = inspect.getsourcelines(validate)[1]
        except (OSError, TypeError):
            return None
        return (path, line, validate.__qualname__) if path else None

    def explain(self, task: str, collections: Sequence[str]) -> str | None:
        """Why the validator missed a difference in the submitted record (tasks/form.py, GenericNewRecordTask)."""
        if wa_catalog.is_catalog(task):  # hook: catalog tasks (catalog.py)
            return wa_catalog.EXPLAIN
        return (
            "GenericNewRecordTask.validate() compares only the task's fields of the submitted record; its "
            "out-of-scope monitor sets WORKARENA_BAD_FIELD_CHANGED on the form page, which submit replaces"
        )

    def reference(self, task: str, episode: Episode) -> Run:
        if wa_catalog.is_catalog(task):  # hook: catalog tasks (catalog.py)
            return wa_catalog.reference(episode)
        t = episode.task
        actions = [Action(forms.SET_FIELD, {"field": f, "value": t.template_record[f]}) for f in t.task_fields]
        return Run((*actions, Action(forms.SUBMIT)), f"I have created the {t.table_label}.")

    def is_write(self, action: Action) -> bool:
        return action.name in forms.FORM_ACTIONS

    def execute(self, episode: Episode, action: Action) -> Step:
        self._check_live(episode)
        if episode.ended_at is not None:
            return Step(f"not executed: the validator ended the episode at step {episode.ended_at} (per-step)")
        if wa_catalog.is_catalog(episode.task_id):  # hook: catalog tasks (catalog.py)
            return wa_catalog.execute(self, episode, action)
        if action.name not in forms.FORM_ACTIONS:
            return Step("", f"unknown form action {action.name!r} (known: {', '.join(forms.FORM_ACTIONS)})")
        try:
            if action.name in (forms.SET_FIELD, forms.SET_FIELD_THEN_SUBMIT):
                self._set_field(episode, str(action.args["field"]), action.args["value"])
            output = "set"
            if action.name in (forms.SUBMIT, forms.SET_FIELD_THEN_SUBMIT):
                output = self._submit(episode)
        except Exception as e:  # noqa: BLE001  (a step the page refused: that cell's delivery failed)
            return Step("", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        episode.steps += 1
        if episode.protocol == "per-step":
            self._validate_step(episode, [])
        return Step(output)

    def _set_field(self, episode: Episode, name: str, value: Any) -> None:
        from browsergym.workarena.tasks.utils.form import fill_text  # type: ignore[import-untyped]

        t, page = episode.task, episode.page
        iframe = page.frame_locator(f'iframe[name="{t.js_prefix}"]')
        label = page.evaluate(f"{t.form_js_selector}.getLabelOf({msgspec.json.encode(name).decode()})")
        control = iframe.get_by_label(label, exact=True)
        if control.count() > 1:
            control = control.nth(0)
        kind = t.table_metadata[name]["type"]
        if kind == "choice":
            control.select_option(str(value))
        elif kind == "boolean":
            control.set_checked(str(value) == "true")
        else:
            fill_text(page=page, iframe=iframe, input_field=control, value=str(value))
        control.evaluate("e => e.blur()")

    def _submit(self, episode: Episode) -> str:
        t, page = episode.task, episode.page
        before = page.evaluate_handle("() => window.gsft_main.document")
        page.frame_locator(f'iframe[name="{t.js_prefix}"]').locator("#sysverb_insert").click()
        try:
            page.wait_for_function(
                "old => window.gsft_main && window.gsft_main.document !== old && window.gsft_main.WORKARENA_LOAD_COMPLETE",
                arg=before,
                timeout=STEP_TIMEOUT_MS,
            )
        except Exception:  # noqa: BLE001  (the page stayed: the form refused the submit)
            return "submitted; the form did not navigate (it refused the submit)"
        return "submitted; the form's frame navigated"

    def _chat(self, episode: Episode, answer: str) -> list[dict[str, str]]:
        chat = [{"role": "user", "message": episode.goal}]
        return chat + ([{"role": "assistant", "message": answer}] if answer else [])

    def _validate_step(self, episode: Episode, chat: list[dict[str, str]]) -> None:
        reward, done, _, info = episode.task.validate(episode.page, chat)
        episode.verdicts.append((float(reward), bool(done), str(info.get("message", ""))))
        if done:
            episode.ended_at = len(episode.verdicts)

    def snapshot(self, episode: Episode) -> Any:
        """The independent readback: the records the episode's user created, raw stored values, form fields only.

        Keyed by creation order within the episode ("1" is its first record), so that a diff against the
        reference names the fields that differ rather than one record removed and another added.
        """
        self._check_live(episode)
        if wa_catalog.is_catalog(episode.task_id):  # hook: catalog tasks (catalog.py)
            return wa_catalog.snapshot(self, episode)
        from browsergym.workarena.api.utils import table_api_call  # type: ignore[import-untyped]

        t = episode.task
        names = sorted(set(t.expected_fields))
        rows = table_api_call(
            instance=self.instance,
            table=t.table_name,
            params={
                "sysparm_query": f"sys_created_by={episode.user}^ORDERBYsys_created_on",
                "sysparm_display_value": "false",
                "sysparm_fields": ",".join(names),
            },
        )["result"]
        return {t.table_name: {str(n): {k: r.get(k) for k in names} for n, r in enumerate(rows, 1)}}

    def verify(self, episode: Episode, run: Run) -> Verdict:
        self._check_live(episode)
        try:
            if episode.protocol == "once-after-submit":
                reward, _, _, info = episode.task.validate(episode.page, self._chat(episode, run.answer))
                return Verdict(
                    reward == 1,
                    f"once-after-submit: validate() after the run: reward {reward:g}, {info.get('message', '')}",
                )
            if episode.ended_at is None:  # the claim is the last step; the validator runs after it too
                self._validate_step(episode, self._chat(episode, run.answer))
            at = episode.ended_at or len(episode.verdicts)
            reward, done, message = episode.verdicts[at - 1]
            how = f"step {at} of {len(episode.verdicts)} ended the episode" if done else "no step ended the episode"
            steps = "steps" if len(episode.verdicts) != 1 else "step"
            return Verdict(
                reward == 1,
                f"per-step: validate() after each of {len(episode.verdicts)} {steps}; {how}: reward {reward:g}, {message}",
            )
        finally:
            self._teardown(episode)  # the verdict is the last use of an episode

    def verify_as(self, task: str, episode: Episode, run: Run) -> Verdict:
        """Another task's validator on this episode (the intent-swap census), once after the run.

        The form validator finds the record through a session-scoped channel: the submit hook stores
        the new record's sys_id in localStorage under a key holding the `id()` of the task object that
        set up the page. A validator object of another task reads its own key, which no submit wrote,
        and says "The form has not been submitted" while the record exists: the paper's session-scoped
        rejections, which say nothing about the record. So the swapped validator is put in the run's
        session: a fresh task object of `task` reads the key this session's submit hook wrote, and
        knows its form's labels from its configuration (its own setup would read them off its form).
        Its code is unchanged; it still checks the URL, the out-of-scope flag and its own fields.
        A catalog task's validator (catalog.py `verify_as`) needs no key: it reads the request named in
        the top window's URL through the Table API. Form and catalog tasks are paired with each other.
        """
        self._check_live(episode)
        catalog = wa_catalog.parse(task)
        protocol = catalog[0] if catalog else self._parse(task)[0]
        if protocol != "once-after-submit" or episode.protocol != "once-after-submit":
            raise AuditError(
                "the WorkArena swap grid grades once after the run (once-after-submit): under per-step "
                "validation the run's own validator ends the episode"
            )
        # The episode stays live for the column's other validators (grades_in_place): verimut closes it.
        if catalog:  # hook: catalog tasks (catalog.py)
            return wa_catalog.verify_as(self, task, episode, self._chat(episode, run.answer))
        _, form, index = self._parse(task)
        validator = self._new_task(form, index)
        # A catalog run's page has no submit hook, so no key of its own: the validator keeps its own key.
        validator.session_sys_id_field = getattr(episode.task, "session_sys_id_field", validator.session_sys_id_field)
        labels = self._config(form, index)["fields"]
        validator.fields = {f: {"fieldName": f, "label": label} for f, label in labels.items()}
        reward, _, _, info = validator.validate(episode.page, self._chat(episode, run.answer))
        return Verdict(
            reward == 1,
            f"once-after-submit: {type(validator).__name__}.validate() of {task}, in the session of "
            f"{episode.task_id}: reward {reward:g}, {info.get('message', '')}",
        )

    def close(self, episode: Episode) -> None:
        """verimut holds the episode no more (a swap column is graded): tear it down now, not at the next reset."""
        self._teardown(episode)

    # -- teardown --------------------------------------------------------------------------------------
    def _check_live(self, episode: Episode) -> None:
        if episode.closed or episode.pid != os.getpid():
            raise RuntimeError("this WorkArena episode is over (one episode is live at a time)")

    def _teardown_live(self) -> None:
        if self._live is not None:
            self._teardown(self._live)
        self._live = None

    def _teardown(self, episode: Episode) -> None:
        """The task's own teardown, then what the readback still finds, then the user; the browser context last."""
        if episode.closed or episode.pid != os.getpid():
            return
        episode.closed = True
        from browsergym.workarena.api.utils import db_delete_from_table, table_api_call  # type: ignore[import-untyped]

        t = episode.task
        try:
            t.teardown()
            # Hook: a catalog task's records span the catalog's request tables (catalog.py).
            tables = wa_catalog.TABLES if wa_catalog.is_catalog(episode.task_id) else (t.table_name,)
            for table in tables:
                left = table_api_call(
                    instance=self.instance,
                    table=table,
                    params={"sysparm_query": f"sys_created_by={episode.user}", "sysparm_fields": "sys_id"},
                )["result"]
                for r in left:
                    db_delete_from_table(instance=self.instance, sys_id=r["sys_id"], table=table)
            if getattr(t, "delete_user_on_teardown", False):
                table_api_call(instance=self.instance, table=f"sys_user/{t._base_user_sysid}", method="DELETE")
        except Exception as e:  # noqa: BLE001  (cleanup must not turn a scored cell into an error)
            log.warning("WorkArena teardown of %s left something behind: %s", episode.task_id, e)
        finally:
            try:
                episode.context.close()
            except Exception as e:  # noqa: BLE001  (a browser already gone has nothing left to close)
                log.debug("closing the browser context of %s: %s", episode.task_id, e)
            if self._live is episode:
                self._live = None

    def close_all(self) -> None:
        if self._pid != os.getpid():
            return
        self._teardown_live()
        try:
            if self._browser is not None:
                self._browser.close()
            if self._playwright is not None:
                self._playwright.stop()
        except Exception as e:  # noqa: BLE001  (exiting anyway)
            log.debug("closing the browser: %s", e)
        self._browser = self._playwright = None
        self._pid = 0


_STAND_IN: Any = None


def _stand_in_url() -> tuple[str, tuple[str, str]]:
    """Start the offline stand-in (once per process) and say where it listens."""
    global _STAND_IN
    from verimut.adapters.workarena import servicenow_standin

    if _STAND_IN is None:
        _STAND_IN = servicenow_standin.StandIn().start()
    return _STAND_IN.url, servicenow_standin.ADMIN


def create(
    version: str | None = None,
    *,
    stand_in: bool | str = False,
    configs: str | None = None,
    catalog: str | None = None,
    catalog_configs: str | None = None,
) -> WorkArena:
    """Options: `stand_in` (the offline stand-in, not ServiceNow: `--stand-in`), `configs` (see DEFAULT_CONFIGS),
    `catalog` ("only" or "none": the catalog tasks alone, or none) and `catalog_configs` ("0,1,2"; catalog.py)."""
    more: dict[str, Any] = {"catalog": catalog, "catalog_configs": catalog_configs}
    require("browsergym-workarena", "WorkArena", "install-workarena.sh")
    if not os.path.exists(CHROMIUM):
        raise AuditError(f"{CHROMIUM} is missing: run `bash scripts/install-chromium.sh`")
    if stand_in not in (False, "", "0", "false", "no"):  # from --option, a flag arrives as text
        url, creds = _stand_in_url()
        return WorkArena(url, creds, stand_in=True, configs=configs, **more)
    names = ("SNOW_INSTANCE_URL", "SNOW_INSTANCE_UNAME", "SNOW_INSTANCE_PWD")
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        raise AuditError(
            f"no ServiceNow instance named: set {', '.join(missing)} (WorkArena's own settings), "
            "or audit the offline stand-in with --stand-in"
        )
    return WorkArena(os.environ[names[0]], (os.environ[names[1]], os.environ[names[2]]), configs=configs, **more)
