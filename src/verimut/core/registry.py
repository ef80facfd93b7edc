"""Named things a user picks on the command line (benchmarks, fault families, reward formulas, executors).

One registry per kind, all alike: register an object by decorator, or a "module:attr" string that is
imported only when the name is asked for (so naming a benchmark does not import every benchmark's
dependencies); a registry may also read a Python entry-point group, so an installed package adds names
without verimut knowing of it. Iterating gives the names in registration order.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, cast, overload

from verimut.core.errors import AuditError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str, *, entry_points: str | None = None, hint: str = "") -> None:
        self.kind = kind  # in messages: "unknown {kind} 'x'"
        self.group = entry_points
        self.hint = hint  # appended to the list of known names in an unknown-name message
        self._items: dict[str, T | str] = {}
        self._read_group = entry_points is None

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...

    @overload
    def register(self, name: str, obj: T | str) -> None: ...

    def register(self, name: str, obj: T | str | None = None) -> Callable[[T], T] | None:
        """`@reg.register("x")` on a definition, or `reg.register("x", obj_or_"module:attr")`."""
        if obj is not None:
            self._add(name, obj)
            return None

        def decorate(thing: T) -> T:
            self._add(name, thing)
            return thing

        return decorate

    def _add(self, name: str, obj: T | str) -> None:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = obj

    def _discover(self) -> None:
        # Read once, late: entry points are scanned only when a name is looked up or listed.
        if self._read_group:
            return
        self._read_group = True
        assert self.group is not None
        for ep in importlib.metadata.entry_points(group=self.group):
            self._items.setdefault(ep.name, ep.value)  # a built-in name is not replaced

    def get(self, name: str) -> T:
        """The object registered under `name`, imported if it was registered by "module:attr"."""
        self._discover()
        if name not in self._items:
            raise AuditError(f"unknown {self.kind} {name!r} (known: {', '.join(self._items)}{self.hint})")
        obj = self._items[name]
        if isinstance(obj, str):
            obj = self._items[name] = cast(T, load_spec(obj, f"{self.kind} {name!r}"))
        return obj

    def names(self) -> list[str]:
        self._discover()
        return list(self._items)

    def items(self) -> list[tuple[str, T]]:
        return [(name, self.get(name)) for name in self.names()]

    def pop(self, name: str, default: T | None = None) -> T | str | None:
        """Forget a name (a test's own registration, undone)."""
        return self._items.pop(name, default)

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        self._discover()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())


def load_spec(spec: str, what: str) -> object:
    """Import `module:attr`; an error names `what` wanted it."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise AuditError(f"{what}: {spec!r} is not `module:object` (both parts are needed)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise AuditError(f"cannot import {module_name!r} for {what}: {e}") from None
    except SyntaxError as e:  # the plug-in's own code: where it is wrong, in one line
        raise AuditError(
            f"{module_name!r} for {what} has a syntax error: {e.msg} ({e.filename}, line {e.lineno})"
        ) from None
    except Exception as e:  # noqa: BLE001  (a plug-in module that raises as it is imported)
        raise AuditError(f"importing {module_name!r} for {what} raised {type(e).__name__}: {e}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise AuditError(f"module {module_name!r} has no attribute {attr!r}") from None
