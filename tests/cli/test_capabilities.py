"""Adapters' optional capabilities, resolved once; adapter options; the registries; an installed third-party adapter."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from examples.todo_bench import TodoBench

from conftest import ROOT
from verimut import adapters
from verimut.adapters.remote import Remote
from verimut.core.benchmark import Adapter, Verdict, resolve
from verimut.core.errors import AuditError
from verimut.core.registry import Registry
from verimut.engine import executor
from verimut.findings import rewards
from verimut.grammar import faults

WORKER_ADAPTER = """
import copy

class Bench:
    name, version, telemetry = "explained", "1", ()
    def provenance(self): return {}
    def tasks(self): return ["t"]
    def instruction(self, task): return "add x"
    def reset(self, task): return {"items": []}
    def reference(self, task, episode): return {"actions": [{"name": "add", "args": {}}], "answer": ""}
    def execute(self, episode, action):
        episode["items"].append(1)
        return {"output": "ok", "error": None}
    def is_write(self, action): return True
    def snapshot(self, episode): return dict(episode)
    def verify(self, episode, run): return {"passed": True, "detail": "", "checks": {}}
    def verify_as(self, task, episode, run): return {"passed": False, "detail": "as " + task, "checks": {}}
    def explain(self, task, collections): return f"{task} never reads " + ", ".join(collections)
    def verifier_source(self, task): return ("/src/bench.py", 7, "Bench.verify")

class Bare:
    name, version, telemetry = "bare", "1", ()
"""


def test_an_adapter_without_optional_members_resolves_to_none_for_each():
    a = resolve(TodoBench())
    assert (a.fork, a.verify_as, a.explain, a.verifier_source, a.form, a.close) == (None,) * 6
    assert (a.grammar, a.concurrency, a.name, a.version) == ("api", None, "todo", "1")
    assert resolve(a) is a  # resolving twice is resolving once


def test_declared_members_are_found_and_a_member_set_to_none_is_absent():
    class Form(TodoBench):
        grammar, concurrency = "form", 1
        verify_as = None

        def form(self, task):
            return task

        def close(self, episode):
            episode["closed"] = True

    a = resolve(Form())
    assert (a.grammar, a.concurrency, a.verify_as) == ("form", 1, None)
    assert a.form is not None and a.form("t") == "t"
    with pytest.raises(AuditError, match="grammar 'forms' is not one of api, form"):
        resolve(type("Bad", (TodoBench,), {"grammar": "forms"})())


def test_the_remote_adapter_offers_what_its_worker_has(tmp_path):
    (tmp_path / "explained.py").write_text(WORKER_ADAPTER)
    remote = Remote(sys.executable, "explained:Bench", timeout=30, cwd=tmp_path)
    a = resolve(remote)
    assert a.fork is None  # the worker's adapter cannot fork: verimut replays from reset
    assert a.explain is not None and a.explain("t", ["items"]) == "t never reads items"
    assert a.verifier_source is not None and a.verifier_source("t") == ("/src/bench.py", 7, "Bench.verify")
    episode = a.reset("t")
    assert a.verify_as is not None and a.verify_as("u", episode, a.reference("t", episode)) == Verdict(False, "as u")


def test_options_reach_the_factory_and_an_object_takes_none(tmp_path, monkeypatch):
    (tmp_path / "optbench.py").write_text(
        "from examples.todo_bench import TodoBench\n"
        "def make(version, *, flavour='plain'):\n"
        "    b = TodoBench()\n"
        "    b.version = flavour\n"
        "    return b\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert adapters.load("optbench:make", None, {"flavour": "salty"}).version == "salty"
    with pytest.raises(AuditError, match="cannot be called as a factory with the version and the options colour"):
        adapters.load("optbench:make", None, {"colour": "red"})
    with pytest.raises(AuditError, match="takes no options"):
        adapters.load("examples.todo_bench:benchmark", None, {"flavour": "salty"})
    assert isinstance(adapters.load("examples.todo_bench:benchmark"), Adapter)


def test_one_registry_style_for_all_four():
    reg: Registry[int] = Registry("widget", hint="; or give module:attr")
    reg.register("one", 1)

    @reg.register("two")
    def two() -> int:
        return 2

    reg.register("sep", "os:sep")  # imported when first asked for
    assert reg.names() == ["one", "two", "sep"] and reg.get("sep") == os.sep and "two" in reg
    with pytest.raises(AuditError, match=r"^unknown widget 'three' \(known: one, two, sep; or give module:attr\)$"):
        reg.get("three")
    with pytest.raises(ValueError, match="already registered"):
        reg.register("one", 3)
    assert faults.FAMILIES.names()[:2] == ["claim-only", "omit"]
    assert rewards.FORMULAS.names() == ["canopy", "entropy-preserving", "procredit"]
    assert executor.EXECUTORS.names() == ["pool", "inprocess", "ray"]
    assert adapters.BENCHMARKS.names()[:8] == [
        "agentdojo",
        "appworld",
        "bfcl",
        "miniwob",
        "miniwob-gym",
        "tau2",
        "webarena-verified",
        "workarena",
    ]
    with pytest.raises(AuditError, match="unknown executor 'threads'"):
        executor.make("threads")


def test_an_installed_package_s_entry_point_names_a_benchmark(tmp_path):
    """A distribution declaring `[project.entry-points."verimut.benchmarks"]` is found by name, offline."""
    site = tmp_path / "site"
    info = site / "todo_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: todo-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[verimut.benchmarks]\nmytodo = examples.todo_bench:benchmark\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "verimut.cli", "audit", "mytodo", "-f", "omit", "-o", str(out), "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "summary.json").read_text())["benchmark"] == "todo"


def test_the_appworld_worker_is_found_in_an_installed_wheel(tmp_path):
    """No source checkout: the worker side ships in the wheel, the interpreter is named or looked up under cwd."""
    # Built from a copy: setuptools writes build/ beside the sources it builds.
    source = tmp_path / "source"
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / part, source / part)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(source), "-w", str(tmp_path / "dist")],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    [wheel] = (tmp_path / "dist").glob("verimut-*.whl")
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = (
        "from verimut.adapters import appworld, remote\n"
        "from verimut.core.errors import AuditError\n"
        "print(appworld.WORKER_SIDE)\n"
        "print(remote.WORKER)\n"
        "try:\n"
        "    appworld.create()\n"
        "except AuditError as e:\n"
        "    print(e)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "VERIMUT_APPWORLD_PYTHON"} | {"PYTHONPATH": str(site)}
    ran = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    worker_side, worker, error = ran.stdout.strip().splitlines()
    assert Path(worker_side).is_relative_to(site) and (Path(worker_side) / "appworld_world.py").is_file()
    assert Path(worker).is_relative_to(site) and Path(worker).is_file()
    assert error == (
        "AppWorld's interpreter .venv-appworld/bin/python is missing: run `bash scripts/install-appworld.sh` first "
        "(or name one with --option appworld_python=PATH or $VERIMUT_APPWORLD_PYTHON)"
    )
