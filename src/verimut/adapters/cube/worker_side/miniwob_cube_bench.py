"""MiniWoB++ through its CUBE (PyPI `miniwob-cube` 1.1.0 on `cube-standard` 0.1.0rc10): the cube's side of verimut's
`cube` adapter, served to verimut by `verimut/adapters/worker.py` (`miniwob_cube_bench:MiniWobCube`).

It runs in CUBE's own environment (Python 3.12, `scripts/install-cube.sh` makes `./.venv-cube`), so it imports the
standard library and CUBE, never verimut. The browser is Debian's headless Chromium, through the cube's own
Playwright tool.

- A task is "<MiniWoB++ task>/<seed>" (`click-checkboxes/1`): the seed picks the instance. miniwob-cube 1.1.0
  drops `TaskConfig.seed` (its reset always runs `Math.seedrandom(42)`), so `reset` is the cube's own
  `MiniWobTask.reset` with the seed in place of 42, as miniwob's gymnasium environment seeds it.
- Actions are verimut's, in the page's own terms (`miniwob_page`: check, fill, choose, press, click, key, submit), each
  found by verimut's own script and done through the cube's tool (`SyncPlaywrightTool`'s CSS-selector actions:
  `browser_click`, `browser_type`, which appends as keys do, `browser_select_option`, `browser_press_key`).
  `submit` (the task's own submit control) is the run's claim that it is done, not a write: MiniWoB++ grades there.
- The reference runs are **verimut's own** (`miniwob_solvers`): MiniWoB++ ships none. Each reads the task's
  instruction (the utterance the cube's reset returns, and the fields miniwob's own extractor takes from it) and
  the page at the start, and acts as the instruction says.
- The end state is read by verimut's own script in the page (`miniwob_page.STATE_JS`, plus a task's own readers
  of its structures, `miniwob_solvers.STATES`), never by the task's reward code: every input of the task's area
  (its value, or whether it is checked, with its label), each select's choice, and whether the episode ended.
  The task's reward variables are kept apart as telemetry (`wob`).
- The verifier is the reward exactly as the cube returns it to a trainer, `Task.evaluate()`, called unmodified:
  `float(raw_reward > 0)`. It passes at 1.0. Its checks name the raw reward too.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import json
import os
import socket
import subprocess
from typing import Any

import reaper
from cube.core import Action as CubeAction
from cube.core import Observation
from cube_browser_playwright import PlaywrightSessionConfig
from cube_browser_tool import PlaywrightConfig
from miniwob.fields import get_field_extractor
from miniwob_cube import MiniWobBenchmarkConfig, MiniWobTask
from miniwob_cube.task import _build_setup_js, _parse_setup_result
from miniwob_page import (
    OTHER_TEXT,
    PAGE_WRITES_JS,
    PRELOAD_JS,
    STATE_JS,
    TARGET,
    TARGET_JS,
    UNMARK_JS,
    WATCH_JS,
    is_claim,
    problem,
)
from miniwob_solvers import SOLVERS, STATES, Instruction

CHROMIUM = "/usr/bin/chromium"
# How Playwright says the browser under a page is gone (its process killed or crashed), not that a task failed.
BROWSER_GONE = ("TargetClosedError", "has been closed", "Browser closed", "Target crashed", "Page crashed")
SEEDS = (1, 2, 3)


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
        # The pointer is put back in the corner: Playwright keeps it where the last episode's click left it, and
        # the new page would show that element's hover look.
        self.tool.page.mouse.move(0, 0)
        self.tool.goto(self.url)
        js = _build_setup_js(self.remove_human_display, self.episode_max_time)
        if "Math.seedrandom(42);" not in js:
            raise RuntimeError("miniwob-cube's reset no longer seeds with Math.seedrandom(42): update _Seeded")
        js = js.replace("Math.seedrandom(42);", f"Math.seedrandom({int(self.seed)});")
        goal, info = _parse_setup_result(self.tool.evaluate_js(js))
        self.tool.evaluate_js(PRELOAD_JS)
        self.tool.evaluate_js(WATCH_JS)
        return Observation.from_text(goal), {**info, "task_id": self.id, "goal": goal, "seed": self.seed}


PER_STEP = "per-step"
PROTOCOLS = ("once", PER_STEP)  # "once": "<task>/<seed>"; "per-step": "<task>/<seed>/per-step"
PROTOCOLS_ENV = "VERIMUT_MINIWOB_PROTOCOLS"  # which protocols tasks() lists: "once" (default), "per-step", "both"


def parse(task: str) -> tuple[str, str, int]:
    """(protocol, MiniWoB++ task, seed) of a task id; ValueError names a malformed one."""
    parts = task.split("/")
    protocol = PER_STEP if len(parts) == 3 and parts[2] == PER_STEP else "once"
    rest = parts[:2] if protocol == PER_STEP else parts
    if len(rest) != 2 or rest[0] not in SOLVERS or not rest[1].isdigit():
        raise ValueError(
            f"unknown task {task!r}: name one as <task>/<seed> or <task>/<seed>/per-step, of {', '.join(SOLVERS)}"
        )
    return protocol, rest[0], int(rest[1])


class Episode:
    """One task instance on the worker's page. A later reset reuses the page, so an older episode is superseded,
    and using it is an error rather than a read of another instance. Under either protocol the episode ends at the
    first step the task is done (the cube's own `finished()`): later actions are not executed, as neither of the
    cube's views (`Task.step`, `AgentView`) executes them; MiniWoB++ grades at that step and the page is over.
    Under per-step validation the reward is also read after every action, as `Task.step` does
    (`validate_per_step`)."""

    def __init__(self, task: str, page: _Seeded, generation: int, goal: str) -> None:
        self.task, self.page, self.generation, self.goal = task, page, generation, goal
        self.protocol, self.miniwob_task, self.seed = parse(task)
        self.steps = 0
        self.ended_at: int | None = None  # the step at which the task said done
        self.reward: float | None = None  # per-step: the reward of the last step evaluated


class MiniWobCube:
    name = "miniwob"
    telemetry = ("wob",)  # the task's own reward variables: what the verifier reads, not the end state
    # No `concurrency`: cells run on every core (issue 44). Each verimut worker process starts its own worker here,
    # with its own browser and its own copy of the cube's http.server, so one page per process is the isolation
    # a cell had when cells ran one at a time.
    replays_vary = True  # a browser's timing: a click can slip, so a reference end is checked before use
    # What a write acts on: the box "Select DKkQH" names is the target of the check, not a word of the sentence
    # (without this, the pin rule read an unquoted label as a weak pin); a selector or id is a target, never prose.
    target_args = ("label", "option", "button", "text", "css", "field")

    def __init__(self) -> None:
        # No space in it: it names the default output directory.
        self.version = f"miniwob-cube-{importlib.metadata.version('miniwob-cube')}"
        session = PlaywrightSessionConfig(headless=True, pw_extra_kwargs={"executable_path": CHROMIUM})
        self._tool = PlaywrightConfig(browser=session, use_html=False, use_axtree=False, use_screenshot=False)
        self._config = MiniWobBenchmarkConfig(tool_config=self._tool, port=_free_port()).subset_from_list(
            sorted(SOLVERS)
        )
        self._server: Any = None
        self._server_reaper = -1  # the write end of its reaper's pipe (reaper.py)
        # One page for every task: Playwright's sync API runs one instance per thread, so the worker has one
        # browser, and a reset loads the task's page in it (an earlier episode is then superseded).
        self._page: _Seeded | None = None
        self._generation = 0
        self._goals: dict[str, str] = {}

    def _open(self, miniwob_task: str, seed: int) -> _Seeded:
        if self._server is None:
            self._server = self._config.make()  # the cube's own http.server over miniwob's html
            # Stopped by its pid when this worker ends, killed or not (the atexit below runs only on a clean end).
            self._server_reaper = reaper.reap(self._server._server_process.pid, "http.server")
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
            reaper.release(self._server_reaper)

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
        once = [f"{t}/{seed}" for t in SOLVERS for seed in SEEDS]
        chosen = os.environ.get(PROTOCOLS_ENV, "once")
        if chosen not in ("once", PER_STEP, "both"):
            raise ValueError(f"{PROTOCOLS_ENV}={chosen!r}: name once, per-step or both")
        per_step = [f"{t}/{PER_STEP}" for t in once]
        return {"once": once, PER_STEP: per_step, "both": once + per_step}[chosen]

    def instruction(self, task: str) -> str:
        if task not in self._goals:
            self.reset(task)
        return self._goals[task]

    def reset(self, task: str) -> Episode:
        _, miniwob_task, seed = parse(task)
        page = self._open(miniwob_task, seed)
        _, info = page.reset()
        self._goals[task] = info["goal"]
        self._generation += 1
        return Episode(task, page, self._generation, info["goal"])

    def _live(self, episode: Episode) -> _Seeded:
        if episode.generation != self._generation:
            raise RuntimeError(f"the episode of {episode.task} was superseded: the worker's one page has moved on")
        return episode.page

    def reference(self, task: str, episode: Episode) -> dict[str, Any]:
        miniwob_task = episode.miniwob_task
        page = self._live(episode)

        def read(js: str, arg: Any = None) -> Any:
            return page.tool.evaluate_js(f"() => ({js})({json.dumps(arg)})")

        fields = dict(get_field_extractor(miniwob_task)(episode.goal))
        actions = SOLVERS[miniwob_task](Instruction(miniwob_task, episode.goal, fields, read))
        return {"actions": actions, "answer": ""}

    def page_writes(self, task: str, run: dict[str, Any]) -> list[dict[str, Any]]:
        """Writes on the task's page at its start on elements neither its instruction nor its run names (another
        email's star or trash, a checkbox outside the requested set, another field: `miniwob_page.PAGE_WRITES_JS`),
        for verimut's `extra-oos`. Read by verimut's script, at a fresh reset of the task."""
        episode = self.reset(task)
        arg = {"goal": episode.goal, "run": run.get("actions", []), "text": OTHER_TEXT}
        return list(self._live(episode).tool.evaluate_js(f"() => ({PAGE_WRITES_JS})({json.dumps(arg)})"))

    def is_write(self, action: dict[str, Any]) -> bool:
        return not is_claim(action)

    def execute(self, episode: Episode, action: dict[str, Any]) -> dict[str, Any]:
        page = self._live(episode)
        if episode.ended_at is not None:
            return {"output": f"not executed: the task's episode ended at step {episode.ended_at}", "error": None}
        episode.steps += 1
        done = self._act(page, action)
        if episode.protocol == PER_STEP:
            episode.reward, _ = page.evaluate()
        if page.finished():
            episode.ended_at = episode.steps
        return done

    def _act(self, page: _Seeded, action: dict[str, Any]) -> dict[str, Any]:
        wrong = problem(action)
        if wrong is not None:
            return {"output": "", "error": wrong}
        name, args = action["name"], action.get("args", {})
        if name == "key":
            cube_action = CubeAction(name="browser_press_key", arguments={"key": args["key"]})
        else:
            # The element is found first, by verimut's script: the cube's tool would wait 30 s for a missing one.
            missing = page.tool.evaluate_js(f"() => ({TARGET_JS})({json.dumps(action)})")
            if missing:
                return {"output": "", "error": missing}
            cube_action = self._cube_action(name, args)
        try:
            result = page.tool.execute_action(cube_action)
        finally:
            if name != "key":
                page.tool.evaluate_js(UNMARK_JS)
        error = getattr(result, "error", None) or getattr(result, "message", None)
        if error is not None and not isinstance(result, Observation):
            return {"output": "", "error": str(error)}
        return {"output": "", "error": None}

    @staticmethod
    def _cube_action(name: str, args: dict[str, Any]) -> CubeAction:
        """The cube tool's action on the element verimut's script marked."""
        if name == "fill":
            return CubeAction(name="browser_type", arguments={"selector": TARGET, "text": args["text"]})
        if name == "choose":
            return CubeAction(name="browser_select_option", arguments={"selector": TARGET, "value": args["option"]})
        return CubeAction(name="browser_click", arguments={"selector": TARGET})

    def snapshot(self, episode: Episode) -> dict[str, Any]:
        page = self._live(episode)
        state = dict(page.tool.evaluate_js(STATE_JS))
        extra = STATES.get(episode.miniwob_task)
        if extra is not None:
            state.update(page.tool.evaluate_js(extra))
        return state

    def verify(self, episode: Episode, run: dict[str, Any]) -> dict[str, Any]:
        page = self._live(episode)
        if episode.protocol == PER_STEP and episode.reward is not None:
            # The trainer's reward is the last step's: at the step the task was done, or the run's last step.
            reward = episode.reward
            when = f"step {episode.ended_at}, done" if episode.ended_at else f"step {episode.steps}, never done"
            detail = f"Task.evaluate() per step = {reward:g} ({when})"
        else:
            reward, info = page.evaluate()
            detail = f"Task.evaluate() = {reward:g} (raw reward {info.get('raw_reward')}, done {info.get('done')})"
        return {"passed": reward >= 1.0, "detail": detail, "checks": {"reward": reward >= 1.0}}

    def close(self, episode: Episode) -> None:
        """Nothing to release: the page stays for the task's next episode (closed when the worker exits)."""

    @staticmethod
    def broken(error: Exception) -> bool:
        """Whether an error is the browser's end, not the task's (verimut's worker protocol): Chromium closed or
        crashed under the page. verimut then ends this worker and starts another, with a new browser, and scores
        the cell again; an error of the task's own code is its cell's error."""
        text = f"{type(error).__name__}: {error}"
        return any(sign in text for sign in BROWSER_GONE)
