"""MiniWoB++ through its CUBE (PyPI `miniwob-cube` 1.1.0 on `cube-standard` 0.1.0rc10): the cube's side of verimut's
`cube` adapter, served to verimut by `verimut/adapters/worker.py` (`miniwob_cube_bench:MiniWobCube`).

It runs in CUBE's own environment (Python 3.12, `scripts/install-cube.sh` makes `./.venv-cube`), so it imports the
standard library and CUBE, never verimut. The browser is Debian's headless Chromium, through the cube's own
Playwright tool.

- A task is "<MiniWoB++ task>/<seed>" (`click-checkboxes/1`): the seed picks the instance. miniwob-cube 1.1.0
  drops `TaskConfig.seed` (its reset always runs `Math.seedrandom(42)`), so `reset` is the cube's own
  `MiniWobTask.reset` with the seed in place of 42, as miniwob's gymnasium environment seeds it.
- Actions are verimut's, in the page's own terms, each done through the cube's tool (`SyncPlaywrightTool`, its
  CSS-selector actions): `check {label}` clicks the checkbox or radio button so labelled; `fill {field, text}`
  types into the input with that id (`browser_type`, which appends, as keys do); `choose {field, option}` picks
  an option of a select (`browser_select_option`); `press {button}` clicks the button with that text. Pressing the
  task's submit button is the run's claim that it is done (not a write): MiniWoB++ grades at that click.
- The reference runs are **verimut's own** (`SOLVERS`): MiniWoB++ ships none. Each reads the task's instruction
  (the utterance the cube's reset returns) and the page, and acts as the instruction says.
- The end state is read by verimut's own script in the page (`STATE_JS`), never by the task's reward code: every
  input of the task's area (its value, or whether it is checked, with its label), each select's choice, and
  whether the episode was submitted. The task's reward variables are kept apart as telemetry (`wob`).
- The verifier is the reward exactly as the cube returns it to a trainer, `Task.evaluate()`, called unmodified:
  `float(raw_reward > 0)`. It passes at 1.0. Its checks name the raw reward too.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import json
import re
import socket
import subprocess
from collections.abc import Callable
from typing import Any

from cube.core import Action as CubeAction
from cube.core import Observation
from cube_browser_playwright import PlaywrightSessionConfig
from cube_browser_tool import PlaywrightConfig
from miniwob_cube import MiniWobBenchmarkConfig, MiniWobTask
from miniwob_cube.task import _build_setup_js, _parse_setup_result

CHROMIUM = "/usr/bin/chromium"
SEEDS = (1, 2, 3)
SUBMIT = ("Submit", "Login")  # the buttons whose click ends a MiniWoB++ episode: the claim

# verimut's own reader of the page (not the task's reward code): every input, textarea and select of the task's
# area, keyed by id (else name and position), and whether the episode ended; the reward variables as telemetry.
STATE_JS = r"""() => {
  const labelOf = (el) => {
    const l = el.closest('label') || (el.id && document.querySelector(`label[for="${el.id}"]`));
    return l ? l.textContent.replace(/\s+/g, ' ').trim() : null;
  };
  const area = document.getElementById('area') || document.body;
  const fields = {};
  Array.from(area.querySelectorAll('input, textarea, select')).forEach((el, i) => {
    const f = {tag: el.tagName.toLowerCase(), type: el.type || null};
    const label = labelOf(el);
    if (label !== null) f.label = label;
    if (el.type === 'checkbox' || el.type === 'radio') f.checked = el.checked;
    else if (el.tagName === 'SELECT') f.value = el.options[el.selectedIndex] ? el.options[el.selectedIndex].text : null;
    else f.value = el.value;
    fields[el.id || `${el.name || el.tagName.toLowerCase()}#${i}`] = f;
  });
  return {fields: fields, episode: {submitted: Boolean(WOB_DONE_GLOBAL)},
          wob: {reward: WOB_REWARD_GLOBAL, raw_reward: WOB_RAW_REWARD_GLOBAL, reason: WOB_REWARD_REASON}};
}"""

# The id of the checkbox or radio button a label names (its own text, trimmed), or null.
_INPUT_OF_LABEL = r"""(label) => {
  const found = Array.from(document.querySelectorAll('#area label'))
    .filter((l) => l.textContent.replace(/\s+/g, ' ').trim() === label && l.querySelector('input'));
  return found.length === 1 ? found[0].querySelector('input').id : null;
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Seeded(MiniWobTask):
    """The cube's MiniWobTask with a seed: its reset, `Math.seedrandom(seed)` in place of the fixed 42. The page is
    loaded afresh (a clean start: MiniWoB++ keeps no state beyond the page), in the browser this task object
    already has, rather than a relaunched one (the cube's reset restarts the browser: 2.5 s a cell)."""

    seed: int = 42

    def reset(self) -> tuple[Observation, dict[str, Any]]:
        self.tool.goto(self.url)
        js = _build_setup_js(self.remove_human_display, self.episode_max_time)
        if "Math.seedrandom(42);" not in js:
            raise RuntimeError("miniwob-cube's reset no longer seeds with Math.seedrandom(42): update _Seeded")
        js = js.replace("Math.seedrandom(42);", f"Math.seedrandom({int(self.seed)});")
        goal, info = _parse_setup_result(self.tool.evaluate_js(js))
        return Observation.from_text(goal), {**info, "task_id": self.id, "goal": goal, "seed": self.seed}


class Episode:
    """One task instance on the worker's page. A later reset reuses the page, so an older episode is superseded,
    and using it is an error rather than a read of another instance."""

    def __init__(self, task: str, page: _Seeded, generation: int, goal: str) -> None:
        self.task, self.page, self.generation, self.goal = task, page, generation, goal


# --- verimut's reference runs: MiniWoB++ ships none ---------------------------------------------------------------


def _quoted(goal: str) -> list[str]:
    return re.findall(r'"([^"]*)"', goal)


def _solve_checkboxes(goal: str) -> list[dict[str, Any]]:
    m = re.fullmatch(r"Select (.*) and click Submit\.", goal)
    if m is None:
        raise ValueError(f"not a click-checkboxes instruction: {goal!r}")
    words = [] if m.group(1) == "nothing" else [w.strip() for w in m.group(1).split(",")]
    return [*({"name": "check", "args": {"label": w}} for w in words), _press("Submit")]


def _solve_option(goal: str) -> list[dict[str, Any]]:
    m = re.fullmatch(r"Select (.*) and click Submit\.", goal)
    if m is None:
        raise ValueError(f"not a click-option instruction: {goal!r}")
    return [{"name": "check", "args": {"label": m.group(1)}}, _press("Submit")]


def _solve_enter_text(goal: str) -> list[dict[str, Any]]:
    [text] = _quoted(goal)
    return [_fill("tt", text), _press("Submit")]


def _solve_login(goal: str) -> list[dict[str, Any]]:
    user, password = _quoted(goal)
    return [_fill("username", user), _fill("password", password), _press("Login")]


def _solve_password(goal: str) -> list[dict[str, Any]]:
    [password] = _quoted(goal)
    return [_fill("password", password), _fill("verify", password), _press("Submit")]


def _solve_list(goal: str) -> list[dict[str, Any]]:
    m = re.fullmatch(r"Select (.*) from the list and click Submit\.", goal)
    if m is None:
        raise ValueError(f"not a choose-list instruction: {goal!r}")
    return [{"name": "choose", "args": {"field": "options", "option": m.group(1)}}, _press("Submit")]


def _fill(field: str, text: str) -> dict[str, Any]:
    return {"name": "fill", "args": {"field": field, "text": text}}


def _press(button: str) -> dict[str, Any]:
    return {"name": "press", "args": {"button": button}}


# MiniWoB++ task -> verimut's solver: the instruction in, the reference run's actions out.
SOLVERS: dict[str, Callable[[str], list[dict[str, Any]]]] = {
    "click-checkboxes": _solve_checkboxes,
    "click-option": _solve_option,
    "enter-text": _solve_enter_text,
    "login-user": _solve_login,
    "enter-password": _solve_password,
    "choose-list": _solve_list,
}


class MiniWobCube:
    name = "miniwob"
    telemetry = ("wob",)  # the task's own reward variables: what the verifier reads, not the end state
    concurrency = 1  # one browser per worker process

    def __init__(self) -> None:
        self.version = f"miniwob-cube {importlib.metadata.version('miniwob-cube')}"
        session = PlaywrightSessionConfig(headless=True, pw_extra_kwargs={"executable_path": CHROMIUM})
        self._tool = PlaywrightConfig(browser=session, use_html=False, use_axtree=False, use_screenshot=False)
        self._config = MiniWobBenchmarkConfig(tool_config=self._tool, port=_free_port()).subset_from_list(
            sorted(SOLVERS)
        )
        self._server: Any = None
        # One page for every task: Playwright's sync API runs one instance per thread, so the worker has one
        # browser, and a reset loads the task's page in it (an earlier episode is then superseded).
        self._page: _Seeded | None = None
        self._generation = 0
        self._goals: dict[str, str] = {}

    def _open(self, miniwob_task: str, seed: int) -> _Seeded:
        if self._server is None:
            self._server = self._config.make()  # the cube's own http.server over miniwob's html
            atexit.register(self._close_all)
        config = next(c for c in self._config.get_task_configs() if c.task_id == miniwob_task)
        if self._page is None:
            self._page = _Seeded(
                metadata=config.metadata,
                tool_config=config.tool_config,
                base_url=config.base_url,
                remove_human_display=config.remove_human_display,
                episode_max_time=config.episode_max_time,
            )
        self._page.metadata = config.metadata
        self._page.seed = seed
        return self._page

    def _close_all(self) -> None:
        if self._page is not None:
            self._page.tool.close()
        if self._server is not None:
            self._server.close()

    def provenance(self) -> dict[str, Any]:
        chromium = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, check=False).stdout.strip()
        packages = ("miniwob-cube", "cube-standard", "miniwob", "playwright")
        return {
            "benchmark": "MiniWoB++ through its CUBE (the reward Task.evaluate() returns to a trainer)",
            **{p: importlib.metadata.version(p) for p in packages},
            "browser": chromium,
            "reference_runs": "verimut's own solvers (MiniWoB++ ships none)",
            "seeds": ", ".join(map(str, SEEDS)),
        }

    def tasks(self) -> list[str]:
        return [f"{t}/{seed}" for t in SOLVERS for seed in SEEDS]

    def instruction(self, task: str) -> str:
        if task not in self._goals:
            self.reset(task)
        return self._goals[task]

    def reset(self, task: str) -> Episode:
        miniwob_task, _, seed = task.rpartition("/")
        if miniwob_task not in SOLVERS or not seed.isdigit():
            raise ValueError(f"unknown task {task!r}: name one as <task>/<seed>, of {', '.join(SOLVERS)}")
        page = self._open(miniwob_task, int(seed))
        _, info = page.reset()
        self._goals[task] = info["goal"]
        self._generation += 1
        return Episode(task, page, self._generation, info["goal"])

    def _live(self, episode: Episode) -> _Seeded:
        if episode.generation != self._generation:
            raise RuntimeError(f"the episode of {episode.task} was superseded: the worker's one page has moved on")
        return episode.page

    def reference(self, task: str, episode: Episode) -> dict[str, Any]:
        actions = SOLVERS[task.rpartition("/")[0]](episode.goal)
        return {"actions": actions, "answer": ""}

    def is_write(self, action: dict[str, Any]) -> bool:
        return not (action["name"] == "press" and action["args"].get("button") in SUBMIT)

    def execute(self, episode: Episode, action: dict[str, Any]) -> dict[str, Any]:
        page = self._live(episode)
        name, args = action["name"], action.get("args", {})
        try:
            cube_action = self._cube_action(page, name, args)
        except ValueError as e:
            return {"output": "", "error": str(e)}
        result = page.tool.execute_action(cube_action)
        error = getattr(result, "error", None) or getattr(result, "message", None)
        if error is not None and not isinstance(result, Observation):
            return {"output": "", "error": str(error)}
        return {"output": "", "error": None}

    def _cube_action(self, page: _Seeded, name: str, args: dict[str, Any]) -> CubeAction:
        """The cube tool's action for one of verimut's: a CSS selector for the element the action names."""
        if name == "check":
            found = page.tool.evaluate_js(f"() => ({_INPUT_OF_LABEL})({json.dumps(args['label'])})")
            if not found:
                raise ValueError(f"no checkbox or radio button labelled {args['label']!r}")
            return CubeAction(name="browser_click", arguments={"selector": f"#{found}"})
        # Each element is looked for first: the cube's tool would wait 30 s for one that is not there.
        if name == "fill":
            if not page.tool.evaluate_js(f"() => Boolean(document.getElementById({json.dumps(args['field'])}))"):
                raise ValueError(f"no field with id {args['field']!r}")
            return CubeAction(name="browser_type", arguments={"selector": f"#{args['field']}", "text": args["text"]})
        if name == "choose":
            options = page.tool.evaluate_js(
                f"() => {{ const s = document.getElementById({json.dumps(args['field'])}); "
                "return s && s.options ? Array.from(s.options).map((o) => o.text) : null; }"
            )
            if options is None or args["option"] not in options:
                raise ValueError(f"no option {args['option']!r} in the list {args['field']!r}")
            return CubeAction(
                name="browser_select_option", arguments={"selector": f"#{args['field']}", "value": args["option"]}
            )
        if name == "press":
            buttons = page.tool.evaluate_js(
                "() => Array.from(document.querySelectorAll('#area button')).map((b) => b.textContent.trim())"
            )
            if buttons.count(args["button"]) != 1:
                raise ValueError(f"no one button {args['button']!r} (the page has {buttons})")
            selector = f"#area button:text-is({json.dumps(args['button'])})"
            return CubeAction(name="browser_click", arguments={"selector": selector})
        raise ValueError(f"unknown action {name!r} (check, fill, choose, press)")

    def snapshot(self, episode: Episode) -> dict[str, Any]:
        return dict(self._live(episode).tool.evaluate_js(STATE_JS))

    def verify(self, episode: Episode, run: dict[str, Any]) -> dict[str, Any]:
        reward, info = self._live(episode).evaluate()
        raw = info.get("raw_reward")
        detail = f"Task.evaluate() = {reward:g} (raw reward {raw}, done {info.get('done')})"
        return {"passed": reward >= 1.0, "detail": detail, "checks": {"reward": reward >= 1.0}}

    def close(self, episode: Episode) -> None:
        """Nothing to release: the page stays for the task's next episode (closed when the worker exits)."""
