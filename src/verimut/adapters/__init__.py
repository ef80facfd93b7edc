"""Benchmark adapters, one module (or package) each, and how a name on the command line finds one.

A name is a registered benchmark (the built-ins below, and any installed package's entry point in
the group `verimut.benchmarks`, e.g. `[project.entry-points."verimut.benchmarks"] mybench =
"mypkg:create"`), or `module:object`. The object is an adapter (it implements
`verimut.core.benchmark.Benchmark`) or a callable that takes the requested version (or None) and the
adapter's options as keywords, and returns one.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verimut.core.benchmark import Adapter, Benchmark, resolve
from verimut.core.errors import AuditError
from verimut.core.registry import Registry, load_spec

__all__ = ["BENCHMARKS", "Adapter", "load", "resolve"]

BENCHMARKS: Registry[Any] = Registry("benchmark", entry_points="verimut.benchmarks", hint="; or give module:object")
BENCHMARKS.register("agentdojo", "verimut.adapters.agentdojo:create")
BENCHMARKS.register("appworld", "verimut.adapters.appworld:create")
BENCHMARKS.register("bfcl", "verimut.adapters.bfcl:create")
BENCHMARKS.register("miniwob", "verimut.adapters.cube:create_miniwob")
BENCHMARKS.register("miniwob-gym", "verimut.adapters.cube:create_miniwob_gym")
BENCHMARKS.register("tau2", "verimut.adapters.tau2:create")
BENCHMARKS.register("webarena-verified", "verimut.adapters.webarena:create")
BENCHMARKS.register("workarena", "verimut.adapters.workarena:create")
BENCHMARKS.register("reasoning-gym", "verimut.adapters.reasoning_gym:create")
BENCHMARKS.register("reward", "verimut.adapters.reward_functions:create")

_REQUIRED = ("name", "version", "telemetry", *(m for m in dir(Benchmark) if not m.startswith("_")))


def _find(name: str) -> Any:
    if ":" not in name:
        return BENCHMARKS.get(name)
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # so `mybench:adapter` finds ./mybench.py, as python -m would
    return load_spec(name, f"benchmark {name!r}")


def load(name: str, version: str | None = None, options: Mapping[str, Any] | None = None) -> Adapter:
    """The adapter for a benchmark name or `module:object`, with its capabilities resolved.

    `options` go to the factory as keywords (`create(version, **options)`): e.g. WorkArena's
    `stand_in` and `configs`, AppWorld's `appworld_python`.
    """
    if name.startswith("reward:"):  # `reward:FILE.py:FUNC`: the reward-function adapter, the rest its target
        name, options = "reward", {**(options or {}), "target": name.removeprefix("reward:")}
    obj = _find(name)
    if isinstance(obj, type):
        raise AuditError(
            f"{name!r} is a class: name an adapter object (`benchmark = {obj.__name__}()`) "
            "or a factory that takes the version, `create(version)`"
        )
    if _implements(obj):
        if options:
            raise AuditError(f"{name!r} is an adapter object: it takes no options ({', '.join(options)})")
        bench = obj
    elif callable(obj):
        bench = _call_factory(name, obj, version, options or {})
    else:
        bench = obj
    missing = [m for m in _REQUIRED if not hasattr(bench, m)]
    if missing:
        raise AuditError(f"{name!r} does not implement the adapter interface: missing {', '.join(missing)}")
    if version is not None and bench.version != version:
        raise AuditError(f"{name!r} is version {bench.version!r}, not the requested {version!r}")
    return dataclasses.replace(resolve(bench), options=dict(options)) if options else resolve(bench)


def _call_factory(name: str, factory: Any, version: str | None, options: Mapping[str, Any]) -> Any:
    try:
        inspect.signature(factory).bind(version, **options)
    except TypeError as e:
        given = f" and the options {', '.join(options)}" if options else ""
        raise AuditError(
            f"{name!r} cannot be called as a factory with the version{given} (`create(version, **options)`): {e}"
        ) from None
    except ValueError:
        pass  # no signature to check (a builtin): let the call say
    try:
        return factory(version, **options)
    except AuditError:
        raise  # the factory's own one-line error (an unknown version, a missing install)
    except Exception as e:  # noqa: BLE001  (the factory is the plug-in's code: any exception is its failure)
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise AuditError(f"the factory {name!r} raised {type(e).__name__}" + (f": {first}" if first else "")) from None


def known(name: str) -> bool:
    """Whether `name` is a registered benchmark (built in, or an installed package's entry point)."""
    return name in BENCHMARKS


def implements(obj: Any) -> bool:
    """Whether `obj` is an adapter object (it has every member of the interface)."""
    return _implements(obj)


def _implements(obj: Any) -> bool:
    return not isinstance(obj, type) and all(hasattr(obj, m) for m in _REQUIRED)
