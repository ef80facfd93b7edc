"""MiniWoB++ through its own gymnasium environment (PyPI `miniwob` 1.1.0, driven by Selenium): the second way the
same MiniWoB++ tasks are scored for training, served to verimut by `verimut/adapters/worker.py`
(`miniwob_gym_bench:MiniWobGym`) as the benchmark `miniwob-gym`, beside the cube's `miniwob`
(`miniwob_cube_bench.py`): the same tasks, the same reference runs (`miniwob_solvers`), the same action vocabulary
and page reader (`miniwob_page`), another reward definition.

It runs in CUBE's environment (`./.venv-cube`, which holds miniwob, gymnasium and selenium) but imports neither CUBE
nor verimut: the standard library, gymnasium, selenium and miniwob. The browser is Debian's headless Chromium
(`/usr/bin/chromium`) through Debian's chromedriver (`/usr/bin/chromedriver`, package chromium-driver,
`scripts/install-chromium.sh`), named to the environment through its own options, `$MINIWOB_CHROME_BINARY` and
`$MINIWOB_CHROMEDRIVER` (miniwob/selenium_instance.py, `SeleniumInstance.create_driver`): no subclass. Headless is
the environment's default (`render_mode=None`: its `headless`, `disable-gpu`, `no-sandbox`). A reaper process
(`reaper.py`) ends each chromedriver and its Chromium when the worker ends, killed or not.

- A task is "<MiniWoB++ task>/<seed>", as the cube's: the environment is `gymnasium.make("miniwob/<task>-v1")` and
  the seed goes to its own `reset(seed=...)` (`Math.seedrandom(seed)` before the task's generator, as the cube's
  worker seeds it). Screenshots are not recorded (`options={"record_screenshots": False}`: the DOM observation is
  what the actions use). One environment (one Chromium) is open at a time: a task of another MiniWoB++ task closes
  it and makes that task's; a reset supersedes the episode before it.
- Actions are verimut's (`miniwob_page`), each found by verimut's own script (`TARGET_JS`, run with the driver's
  `execute_script`, marks the one element), then done with the environment's own action space through `step()`:
  the marked element's `ref` is the one the environment's DOM observation gave it (`core.getDOMInfo` stores it in
  the element's `data-wob_ref`; it is used only when it is in the last observation's `dom_elements` and
  `core.previousDOMInfo` maps it to that element, which is what `core.elementClick(ref)` clicks). fill is
  `FOCUS_ELEMENT_AND_TYPE_TEXT(ref, text)` (then `TYPE_TEXT` for each further 64 characters, the space's
  `text_max_len`; `FOCUS_ELEMENT_AND_TYPE_FIELD` types the same keys, but only an utterance field's value, and a
  planted wrong value is none); key is `PRESS_KEY`, the Playwright key name
  translated to miniwob's (`Enter` -> `<Enter>`, `Control+a` -> `C-a`). The action space is the environment's
  default preset ("all_supported") with one change, through its own `ActionSpaceConfig`: `allowed_keys` is
  miniwob's own `ALL_POSSIBLE_KEYS` rather than the preset's 100 "safe" keys (Humphreys et al. 2022), which lack
  keys the runs press (`Control+ArrowLeft` in choose-date's datepicker); the reward does not depend on it. A key
  outside even that list is the action's error. choose has no action of its own in the space: it is
  `FOCUS_ELEMENT_AND_TYPE_TEXT(ref of the select, option text)` (the select's type-ahead picks the option).
  Fallbacks, each named in the step's output: an element not in the last observation is looked for again after a
  `NONE` step (the environment's own re-observation); still missing, it is clicked (and typed into) by Selenium on
  the marked element, then a `NONE` step reads the reward; a choose whose type-ahead picked another option is
  finished by Selenium's `Select` on the marked element, then a `NONE` step. Every other action (check, press,
  click, submit) is `CLICK_ELEMENT(ref)`. The run's claim (`miniwob_page.is_claim`: clicking the task's submit
  control) is not a write, as in the cube.
- The episode is a trainer's: once a step returns `terminated`, later actions are not executed (a trainer resets
  there; stepping on would be refused by `SeleniumInstance.perform` and would pay the last reward again).
- The end state is verimut's own reader in the page (`miniwob_page.STATE_JS` plus `miniwob_solvers.STATES[task]`,
  run with `execute_script`), never the reward code; the task's reward variables are telemetry (`wob`).
- The verifier is the reward exactly as the environment returns it to a trainer from `step()` under its default
  reward processor, `miniwob.reward.get_original_reward` (SeleniumInstance.__init__: `reward_processor` None ->
  `get_original_reward`), which is `float(metadata["env_reward"])`, the page's `WOB_REWARD_GLOBAL`:
  `core.endEpisode(reward, time_proportional)` sets it to the task's raw reward, times
  `max(0, 1 - dt / core.EPISODE_MAX_TIME)` when the task asks for the time penalty (nearly every task does for a
  positive reward, `core.endEpisode(r, r > 0)`; button-delay, chase-circle, moving-items and simon-says do not), and
  0 until the episode ends. The run's reward is the episode's return, the sum of the rewards of the steps executed
  (one nonzero: the step that terminated). A correct run's return is therefore below 1.0 (by the fraction of the
  task's time used), so `>= 1.0` is read on the same step's reward before the time discount, the `raw_reward` the
  environment returns beside it in `info`: the run passes when the episode terminated and the task paid its full
  reward (raw reward >= 1.0). Partial credit (click-checkboxes pays `(right - wrong) / boxes`) is a lower return,
  not a pass: where the cube (`float(raw_reward > 0)`) accepts it, this benchmark does not. An episode that runs
  past the task's own time limit (`core.EPISODE_MAX_TIME`: 10 s unless the task sets 7-30 s; the cube sets
  1000 s) ends with -1 ('timed out'), which a trainer reads at its next step.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import json
import os
import subprocess
from typing import Any

import gymnasium
import miniwob  # noqa: F401  (registers the miniwob/<task>-v1 environments)
import reaper
from miniwob.action import ActionSpaceConfig, ActionTypes
from miniwob.constants import ALL_POSSIBLE_KEYS
from miniwob.reward import get_original_reward
from miniwob_page import STATE_JS, TARGET, TARGET_JS, UNMARK_JS, WATCH_JS, is_claim, problem
from miniwob_solvers import SOLVERS, STATES, Instruction
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.select import Select

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# How Selenium says the browser under its session is gone (its process killed or crashed), not that a task failed.
BROWSER_GONE = ("InvalidSessionIdException", "invalid session id", "chrome not reachable", "not connected to DevTools")
SEEDS = (1, 2, 3)  # must match miniwob_cube_bench.SEEDS (not imported from there: that module imports CUBE)
RECORD_SCREENSHOTS = False  # the DOM observation is what the actions use; a screenshot per step is slow

# The marked element's ref, when the environment's last observation gave it one (`core.getDOMInfo` stores it in
# data-wob_ref, for this episode) and `core.elementClick(ref)` would click that very element; else null.
REF_JS = f"""
const e = document.querySelector('{TARGET}');
if (!e || e.dataset.wob_ref === undefined || e.dataset.wob_eps !== 'e' + WOB_EPISODE_ID) return null;
const ref = +e.dataset.wob_ref;
return (core.previousDOMInfo || {{}})[ref] === e ? ref : null;
"""
CHOSEN_JS = f"const e = document.querySelector('{TARGET}'); return e && e.options[e.selectedIndex] ? " + (
    "e.options[e.selectedIndex].text : null;"
)

# Playwright's modifier names -> miniwob's key prefixes (miniwob/constants.py, WEBDRIVER_MODIFIER_KEYS).
# In ALL_POSSIBLE_KEYS' order (A-, C-, M-, S-), whatever order Playwright's name gives them in.
MODIFIERS = {"Alt": "A-", "Control": "C-", "Meta": "M-", "Shift": "S-"}


def parse(task: str) -> tuple[str, int]:
    """(MiniWoB++ task, seed) of a task id; ValueError names a malformed one."""
    miniwob_task, _, seed = task.rpartition("/")
    if miniwob_task not in SOLVERS or not seed.isdigit():
        raise ValueError(f"unknown task {task!r}: name one as <task>/<seed>, of {', '.join(SOLVERS)}")
    return miniwob_task, int(seed)


def miniwob_key(key: str) -> str:
    """A Playwright key name in miniwob's syntax: `Enter` -> `<Enter>`, `Control+a` -> `C-a`, `a` -> `a`."""
    *mods, name = key.split("+") if key != "+" else ["+"]
    if name in ("Space", " "):
        name = "<Space>"
    elif len(name) > 1:
        name = f"<{name}>"
    unknown = [m for m in mods if m not in MODIFIERS]
    if unknown:
        raise ValueError(f"unknown modifier {unknown[0]!r} in key {key!r}")
    return "".join(p for m, p in MODIFIERS.items() if m in mods) + name


class Episode:
    """One task instance in the environment of its MiniWoB++ task: its observation, the rewards its steps returned
    (the trainer's), and whether a step said terminated. A later reset supersedes it."""

    def __init__(self, task: str, env: Any, generation: int, obs: dict[str, Any]) -> None:
        self.task, self.env, self.generation = task, env, generation
        self.miniwob_task, self.seed = parse(task)
        self.goal: str = obs["utterance"]
        self.fields: dict[str, str] = dict(obs["fields"])
        self.obs = obs
        self.rewards: list[float] = []  # one per step() call
        self.terminated = False
        self.ended_at: int | None = None  # the step() at which the episode terminated
        self.info: dict[str, Any] = {}  # the last step's info (done, env_reward, raw_reward, reason)


class MiniWobGym:
    name = "miniwob-gym"
    telemetry = ("wob",)  # the task's own reward variables: what the verifier reads, not the end state
    # No `concurrency`: every verimut worker process starts its own worker here, with its own browser (issue 44).
    replays_vary = True  # a browser's timing: a click can slip, so a reference end is checked before use
    target_args = (
        "label",
        "option",
        "button",
        "text",
        "css",
        "field",
    )  # what a write acts on, as the cube's (its docstring says why)

    def __init__(self) -> None:
        # No space in it: it names the default output directory.
        self.version = f"miniwob-{importlib.metadata.version('miniwob')}"
        self._env: Any = None
        self._reaper_pipe = -1
        self._env_task: str | None = None
        self._generation = 0
        self._goals: dict[str, str] = {}
        atexit.register(self._close_env)

    # --- the environment -------------------------------------------------------------------------------------

    def _open(self, miniwob_task: str) -> Any:
        if self._env_task != miniwob_task:
            self._close_env()
            # The environment's own options for its browser: SeleniumInstance.create_driver reads them (both or
            # neither) when it starts Chromium, here.
            os.environ["MINIWOB_CHROME_BINARY"] = CHROMIUM
            os.environ["MINIWOB_CHROMEDRIVER"] = CHROMEDRIVER
            env_id = f"miniwob/{miniwob_task}-v1"
            if env_id not in gymnasium.registry:
                raise ValueError(f"miniwob {importlib.metadata.version('miniwob')} registers no {env_id}")
            preset = ActionSpaceConfig.get_preset("all_supported")  # the environment's default action space
            config = ActionSpaceConfig(action_types=preset.action_types, allowed_keys=ALL_POSSIBLE_KEYS)
            # the trainer's way in (render_mode None is headless), with every key combination miniwob knows
            self._env = gymnasium.make(env_id, action_space_config=config)
            self._env_task = miniwob_task
            self._reap(self._driver(self._env).service.process.pid)
        return self._env

    def _reap(self, driver_pid: int) -> None:
        """Start the reaper of this chromedriver (and its Chromium): it acts when the pipe's write end closes, at
        `_close_env` or when this process dies however it dies (reaper.py)."""
        self._reaper_pipe = reaper.reap(driver_pid, "chromedriver")

    def _close_env(self) -> None:
        if self._env is not None:
            env, self._env, self._env_task = self._env, None, None
            self._generation += 1  # its episodes are gone with it
            try:
                env.close()
            finally:
                reaper.release(self._reaper_pipe)  # the reaper kills whatever of the driver's tree close() left

    @staticmethod
    def _driver(env: Any) -> Any:
        return env.unwrapped.instance.driver

    def _live(self, episode: Episode) -> Any:
        if episode.generation != self._generation or episode.env is not self._env:
            raise RuntimeError(f"the episode of {episode.task} was superseded: the worker's environment has moved on")
        return self._driver(episode.env)

    # --- the worker protocol ---------------------------------------------------------------------------------

    def provenance(self) -> dict[str, Any]:
        def version_of(binary: str) -> str:
            return subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout.strip()

        return {
            "benchmark": "MiniWoB++ through its gymnasium environment (the return step() gives a trainer, under the "
            "default reward processor get_original_reward; passing at full raw reward)",
            **{p: importlib.metadata.version(p) for p in ("miniwob", "gymnasium", "selenium")},
            "browser": version_of(CHROMIUM),
            "driver": version_of(CHROMEDRIVER),
            "reward_processor": f"miniwob.reward.{get_original_reward.__name__}",
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
        miniwob_task, seed = parse(task)
        env = self._open(miniwob_task)
        obs, _ = env.reset(seed=seed, options={"record_screenshots": RECORD_SCREENSHOTS})
        self._driver(env).execute_script(f"({WATCH_JS})();")
        self._generation += 1
        episode = Episode(task, env, self._generation, obs)
        self._goals[task] = episode.goal
        return episode

    def reference(self, task: str, episode: Episode) -> dict[str, Any]:
        driver = self._live(episode)

        def read(js: str, arg: Any = None) -> Any:
            return driver.execute_script(f"return ({js})(arguments[0]);", arg)

        # The fields are the environment's own observation's (its field extractor, miniwob.fields, as the cube's).
        actions = SOLVERS[episode.miniwob_task](Instruction(episode.miniwob_task, episode.goal, episode.fields, read))
        return {"actions": actions, "answer": ""}

    def is_write(self, action: dict[str, Any]) -> bool:
        return not is_claim(action)

    def execute(self, episode: Episode, action: dict[str, Any]) -> dict[str, Any]:
        driver = self._live(episode)
        if episode.terminated:
            return {"output": f"not executed: the episode terminated at step {episode.ended_at}", "error": None}
        wrong = problem(action)
        if wrong is not None:
            return {"output": "", "error": wrong}
        name, args = action["name"], action.get("args", {})
        if name == "key":
            try:
                key = miniwob_key(args["key"])
            except ValueError as e:
                return {"output": "", "error": str(e)}
            allowed = episode.env.unwrapped.action_space_config.allowed_keys
            if key not in allowed:
                return {"output": "", "error": f"key {key!r} is not in the environment's action space (allowed_keys)"}
            self._step(episode, ActionTypes.PRESS_KEY, key=allowed.index(key))
            return {"output": "", "error": None}
        missing = driver.execute_script(f"return ({TARGET_JS})(arguments[0]);", action)
        if missing:
            return {"output": "", "error": missing}
        try:
            return self._on_element(episode, driver, name, args)
        finally:
            driver.execute_script(f"({UNMARK_JS})();")

    def _on_element(self, episode: Episode, driver: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
        notes: list[str] = []
        ref = self._ref(episode, driver)
        if ref is None:
            self._step(episode, ActionTypes.NONE)  # the environment's own re-observation: the element may be new
            notes.append("the element was not in the observation: a NONE step observed again")
            if episode.terminated:
                return {"output": "; ".join(notes), "error": None}
            ref = self._ref(episode, driver)
        if ref is None:
            error = self._by_selenium(driver, name, args)
            if error is not None:
                return {"output": "; ".join(notes), "error": error}
            notes.append("the element has no ref in the observation: done by Selenium, then a NONE step")
            self._step(episode, ActionTypes.NONE)
            return {"output": "; ".join(notes), "error": None}
        if name in ("fill", "choose"):
            text = args["text"] if name == "fill" else args["option"]
            limit = episode.env.unwrapped.action_space_config.text_max_len
            chunks = [text[i : i + limit] for i in range(0, len(text), limit)]
            if not chunks:
                self._step(episode, ActionTypes.CLICK_ELEMENT, ref=ref)  # nothing to type: the focus alone
            for k, chunk in enumerate(chunks):
                if episode.terminated:
                    break
                if k == 0:
                    self._step(episode, ActionTypes.FOCUS_ELEMENT_AND_TYPE_TEXT, ref=ref, text=chunk)
                else:
                    self._step(episode, ActionTypes.TYPE_TEXT, text=chunk)
            if name == "choose" and not episode.terminated:
                chosen = driver.execute_script(CHOSEN_JS)
                if chosen != args["option"]:
                    error = self._by_selenium(driver, name, args)
                    if error is not None:
                        return {"output": "; ".join(notes), "error": error}
                    notes.append(f"the select's type-ahead picked {chosen!r}: chosen by Selenium, then a NONE step")
                    self._step(episode, ActionTypes.NONE)
        else:
            self._step(episode, ActionTypes.CLICK_ELEMENT, ref=ref)
        return {"output": "; ".join(notes), "error": None}

    def _ref(self, episode: Episode, driver: Any) -> int | None:
        ref = driver.execute_script(REF_JS)
        seen = {e["ref"] for e in episode.obs.get("dom_elements", ())}
        return int(ref) if ref is not None and ref in seen else None

    @staticmethod
    def _by_selenium(driver: Any, name: str, args: dict[str, Any]) -> str | None:
        """The fallback: the marked element, by Selenium itself (not the environment's action space)."""
        try:
            element = driver.find_element(By.CSS_SELECTOR, TARGET)
            if name == "choose":
                Select(element).select_by_visible_text(args["option"])
            elif name == "fill":
                element.click()
                element.send_keys(args["text"])
            else:
                element.click()
        except WebDriverException as e:
            return f"Selenium could not {name} the element: {str(e.msg or e).splitlines()[0]}"
        return None

    def _step(self, episode: Episode, action_type: ActionTypes, **values: Any) -> None:
        """One step() of the environment, as a trainer takes it: its reward and terminated flag kept."""
        env = episode.env
        action = env.unwrapped.create_action(action_type, **values)
        obs, reward, terminated, _truncated, info = env.step(action)
        episode.obs = obs
        episode.rewards.append(float(reward))
        episode.info = {k: v for k, v in info.items() if k != "root_dom"}
        if terminated:
            episode.terminated = True
            episode.ended_at = len(episode.rewards)

    def snapshot(self, episode: Episode) -> dict[str, Any]:
        driver = self._live(episode)
        state = dict(driver.execute_script(f"return ({STATE_JS})();"))
        extra = STATES.get(episode.miniwob_task)
        if extra is not None:
            state.update(driver.execute_script(f"return ({extra})();"))
        return json.loads(json.dumps(state))

    def verify(self, episode: Episode, run: dict[str, Any]) -> dict[str, Any]:
        self._live(episode)
        ret = sum(episode.rewards)
        raw = episode.info.get("raw_reward") if episode.terminated else None
        full = raw is not None and float(raw) >= 1.0
        steps = len(episode.rewards)
        if episode.terminated:
            reason = episode.info.get("reason")
            when = f"terminated at step {episode.ended_at} of {steps}, raw reward {raw}" + (
                f", {reason}" if isinstance(reason, str) and reason else ""
            )
        else:
            when = f"not terminated after {steps} steps"
        detail = f"return {ret:.3f} ({get_original_reward.__name__}: {when})"
        passed = episode.terminated and full
        return {"passed": passed, "detail": detail, "checks": {"terminated": episode.terminated, "full_reward": full}}

    def close(self, episode: Episode) -> None:
        """Nothing to release: the environment stays for the task's next episode (closed when the worker exits)."""

    @staticmethod
    def broken(error: Exception) -> bool:
        """Whether an error is the browser's end, not the task's (verimut's worker protocol): Chromium closed or
        crashed under the driver's session. verimut then ends this worker (its reaper ends chromedriver) and
        starts another, with a new browser, and scores the cell again."""
        text = f"{type(error).__name__}: {error}"
        return any(sign in text for sign in BROWSER_GONE)
