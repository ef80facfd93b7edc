"""MiniWoB++ through its own gymnasium environment (`miniwob-gym`), for real: Selenium and Debian's chromedriver on
headless Chromium, the same tasks, reference runs and page reader as the cube's `miniwob`, and the return a
trainer's `step()` gets under the environment's default reward processor as the verifier.

The two reward definitions, as their code has them:
- the cube, `miniwob_cube/task.py` `_parse_validation_result`: `reward = float(raw_reward > 0)`;
- the gymnasium environment, `miniwob/selenium_instance.py` (`reward_processor` None -> `get_original_reward`) and
  `miniwob/reward.py` `get_original_reward`: `float(metadata["env_reward"])`, the page's `WOB_REWARD_GLOBAL`, which
  `core.endEpisode` (`html/core/core.js`) sets to the raw reward times `max(0, 1 - dt / EPISODE_MAX_TIME)` for a
  positive one. It pays partial credit and never reaches 1.0 (the time penalty), so `miniwob-gym` passes a run
  that terminated with the full raw reward.
click-checkboxes' raw reward is `(right - wrong) / boxes` (`html/miniwob/click-checkboxes.html`): with one box of
five left unticked, 3/5 = 0.6 > 0, which the cube pays 1.0 and the gym environment 0.6 times the time factor.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT

if not (ROOT / ".venv-cube" / "bin" / "python").exists():
    pytest.skip("CUBE's environment .venv-cube is missing: scripts/install-cube.sh", allow_module_level=True)
if not Path("/usr/bin/chromedriver").exists():
    pytest.skip("Debian's chromedriver is missing: scripts/install-chromium.sh", allow_module_level=True)

from verimut import adapters
from verimut.core.replay import replay

SEEDS = (1, 2, 3)


@pytest.fixture(scope="module")
def gym():
    b = adapters.load("miniwob-gym")
    yield b
    b.bench._kill()


@pytest.fixture(scope="module")
def cube():
    b = adapters.load("miniwob")
    yield b
    b.bench._kill()


def graded(bench, task, edit=lambda actions: actions):
    reference = bench.reference(task, bench.reset(task))
    run = reference.replace_actions(edit(list(reference.actions)))
    return reference, bench.verify(replay(bench, task, run).episode, run)


@pytest.mark.parametrize("name", ["click-checkboxes", "enter-text"])
def test_the_control_passes_on_every_seed(gym, name):
    for seed in SEEDS:
        _, verdict = graded(gym, f"{name}/{seed}")
        assert verdict.passed, verdict.detail
        assert verdict.checks == {"terminated": True, "full_reward": True}
        # the return a trainer reads is the time-discounted full reward: below 1.0 even for the reference run
        ret = float(verdict.detail.split()[1])
        assert 0.0 < ret < 1.0, verdict.detail
        assert "raw reward 1)" in verdict.detail


def test_the_tasks_are_the_cubes(gym, cube):
    """Same ids, and the same seed gives the same instance (the env's reset(seed) and the cube worker's seeding)."""
    assert set(gym.tasks()) <= set(cube.tasks())
    for seed in SEEDS:
        task = f"click-checkboxes/{seed}"
        assert gym.instruction(task) == cube.instruction(task)


def test_partial_credit_passes_the_cube_not_the_gym(gym, cube):
    task = "click-checkboxes/3"  # five boxes, four asked for
    assert gym.instruction(task).count(",") == 3

    def untick_one(actions):
        assert [a.name for a in actions[:-1]] == ["check"] * 4  # then the claim, the Submit button
        return actions[1:]

    reference, cube_verdict = graded(cube, task, untick_one)
    assert cube_verdict.passed  # float(raw_reward > 0): 0.6 > 0
    assert "Task.evaluate() = 1 " in cube_verdict.detail and "raw reward 0.6" in cube_verdict.detail

    gym_reference, gym_verdict = graded(gym, task, untick_one)
    assert gym_reference.actions == reference.actions  # the same reference run on the same instance
    assert not gym_verdict.passed
    assert gym_verdict.checks == {"terminated": True, "full_reward": False}
    assert "raw reward 0.6" in gym_verdict.detail
    ret = float(gym_verdict.detail.split()[1])
    assert 0.0 < ret < 0.6, gym_verdict.detail  # partial credit, time-discounted


def test_an_action_after_termination_is_not_executed(gym):
    task = "enter-text/1"
    reference = gym.reference(task, gym.reset(task))
    run = reference.replace_actions([*reference.actions, reference.actions[0]])
    done = replay(gym, task, run)
    assert done.steps[-1].output == "not executed: the episode terminated at step 2"
    assert gym.verify(done.episode, run).passed


def test_a_browser_killed_mid_audit_changes_no_outcome(tmp_path):
    # issue 43: Selenium's "invalid session id ... the browser has closed the connection" made 13 cells of this
    # audit errors; now the worker says its browser is gone (`broken`), and the cell is scored on a new one.
    import json

    from browser_crash import audit_killing_the_browser
    from conftest import verimut

    tasks = ("click-checkboxes/3", "enter-text/1")
    clean = tmp_path / "clean"
    done = verimut("audit", "miniwob-gym", *(a for t in tasks for a in ("--task", t)), "--out", str(clean), "-q")
    code, killed = audit_killing_the_browser("miniwob-gym", tasks, tmp_path / "crashed")
    assert killed and code == done.returncode, done.stderr

    def outcomes(out):
        return {r["cell_id"]: r["outcome"] for r in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}

    assert outcomes(tmp_path / "crashed") == outcomes(clean)
