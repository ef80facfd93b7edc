"""What the built-in adapters share: state as plain data, task lookup, and the installed package's version.

Each benchmark keeps its own facts in its own module; these are the parts that were the same in each.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from verimut.core.errors import AuditError

T = TypeVar("T")


def _no_fields(value: Any) -> Mapping[str, Any] | None:
    return None


def plain(
    value: Any,
    fields: Callable[[Any], Mapping[str, Any] | None] = _no_fields,
    other: Callable[[Any], Any] = repr,
) -> Any:
    """`value` as plain JSON data: dicts (keys as text), lists (tuples too, sets sorted), scalars.

    `fields` turns a benchmark's record object into its fields (None: not a record); `other` says
    what any remaining object becomes (its repr unless told).
    """
    record = fields(value)
    if record is not None:
        return {str(k): plain(v, fields, other) for k, v in record.items()}
    if isinstance(value, dict):
        return {str(k): plain(v, fields, other) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, fields, other) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v, fields, other) for v in value), key=repr)  # a set's order is not state
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return other(value)


def unknown_task(benchmark: str, task: str, example: str | None = None) -> AuditError:
    like = f" (like {example!r})" if example else ""
    return AuditError(f"unknown {benchmark} task {task!r}{like}")


def lookup(tasks: Mapping[str, T], task: str, benchmark: str) -> T:
    """A task by id, or an AuditError naming the benchmark."""
    try:
        return tasks[task]
    except KeyError:
        raise unknown_task(benchmark, task) from None


def installed(distribution: str) -> str | None:
    """The installed version of a distribution, or None when it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def require(distribution: str, what: str, script: str) -> str:
    """The installed version, or an AuditError saying which install script provides it."""
    version = installed(distribution)
    if version is None:
        raise AuditError(f"{what} is not installed: run `bash scripts/{script}` first")
    return version


def check_version(name: str, package: str, actual: str, requested: str | None) -> None:
    """A benchmark whose version is its package's: a requested version must be the installed one."""
    if requested is not None and requested != actual:
        raise AuditError(f"{name} is {package} {actual}, not the requested {requested!r}")
