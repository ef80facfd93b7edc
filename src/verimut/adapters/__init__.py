"""Benchmark adapters, one module each, and how a name on the command line finds one.

A name is either a built-in benchmark ("agentdojo") or `module:object`, where the object
is an adapter (it implements `verimut.benchmark.Benchmark`) or a callable that takes the
requested version (or None) and returns one.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from verimut.benchmark import Benchmark
from verimut.errors import AuditError

BUILTIN = {
    "agentdojo": "verimut.adapters.agentdojo:create",
    "appworld": "verimut.adapters.appworld:create",
    "bfcl": "verimut.adapters.bfcl:create",
    "tau2": "verimut.adapters.tau2:create",
    "workarena": "verimut.adapters.workarena:create",
}
_REQUIRED = ("name", "version", "telemetry", *(m for m in dir(Benchmark) if not m.startswith("_")))


def _import(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # so `mybench:adapter` finds ./mybench.py, as python -m would
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise AuditError(f"cannot import {module_name!r} for benchmark {spec!r}: {e}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise AuditError(f"module {module_name!r} has no attribute {attr!r}") from None


def load(name: str, version: str | None = None) -> Benchmark:
    """The adapter for a benchmark name or `module:object`."""
    if name in BUILTIN:
        spec = BUILTIN[name]
    elif ":" in name:
        spec = name
    else:
        known = ", ".join(sorted(BUILTIN))
        raise AuditError(f"unknown benchmark {name!r} (built in: {known}; or give module:object)")
    obj = _import(spec)
    bench = obj if _implements(obj) else obj(version) if callable(obj) else obj
    missing = [m for m in _REQUIRED if not hasattr(bench, m)]
    if missing:
        raise AuditError(f"{name!r} does not implement the adapter interface: missing {', '.join(missing)}")
    if version is not None and bench.version != version:
        raise AuditError(f"{name!r} is version {bench.version!r}, not the requested {version!r}")
    return bench


def _implements(obj: Any) -> bool:
    return not isinstance(obj, type) and all(hasattr(obj, m) for m in _REQUIRED)
