"""A recording view of in-process Python state: what a verifier reads of the objects it is given, while it runs.

`recorded(roots, call)` calls `call()` (the benchmark's unmodified verifier) and returns what it returned and
the paths it read under each root (core/reads.py says what a read is). Nothing of the verifier is changed:

- objects (pydantic models, plain class instances): for the length of the call, their classes get a
  `__getattribute__` that notes each instance attribute taken from an object reached from a root, and passes
  every lookup on to the class's own. Methods run as they are; the fields they take are noted in turn. Taking
  `__dict__`, a dump or a copy reads the object whole (that is how a pydantic equality or a diff reads).
  The classes are put back as they were when the call ends (also when it raises);
- dicts and lists reached from a root are handed out as recording copies of themselves (a dict or list
  subclass, so `isinstance` and equality hold): a key taken is a value read, listing or counting their
  members a keys read, anything else (an equality, a slice, a method not below) a whole read. Being shallow
  copies, a write the verifier makes into one is not kept in the state (AgentDojo's verifiers write nothing).

The recorder is per thread: a thread that is not recording passes through the hooked classes untouched.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from verimut.core.reads import KEYS, VALUE, WHOLE, Reads

T = TypeVar("T")
Path = tuple[str, ...]

# Taking one of these off an object reads all of it.
_WHOLE_NAMES = frozenset(
    {
        "__dict__",
        "model_dump",
        "model_dump_json",
        "model_copy",
        "dict",
        "json",
        "copy",
        "__deepcopy__",
        "__copy__",
        "__getstate__",
        "__reduce_ex__",
        "__reduce__",
    }
)
_SCALARS = (str, int, float, bool, bytes, type(None))

_local = threading.local()
_lock = threading.Lock()


class _Recorder:
    def __init__(self) -> None:
        self.paths: dict[int, Path] = {}
        self.keep: list[Any] = []  # the objects `paths` names, alive as long as their ids are used
        self.seen: set[tuple[Path, str]] = set()
        self.classes: list[type] = []

    def read(self, path: Path, how: str) -> None:
        self.seen.add((path, how))

    def view(self, value: Any, path: Path) -> Any:
        """`value`, as the verifier gets it at `path`: a recording copy, a registered object, or as it is."""
        if isinstance(value, _SCALARS):
            self.read(path, VALUE)
            return value
        if type(value) is dict:
            return _RecordingDict(value, self, path)
        if type(value) is list:
            return _RecordingList(value, self, path)
        if isinstance(value, (_RecordingDict, _RecordingList)):
            return value
        cls = type(value)
        if _has_fields(value) and cls.__module__ != "builtins":
            self.paths[id(value)] = path
            self.keep.append(value)
            if cls not in self.classes:
                _hook(cls)
                self.classes.append(cls)
            return value
        self.read(path, WHOLE)  # a tuple, a set, a datetime...: taken as one value
        return value


def _has_fields(value: Any) -> bool:
    try:
        object.__getattribute__(value, "__dict__")  # not through a hooked class's lookup: that would be a read
    except AttributeError:
        return False
    return True


def _current() -> _Recorder | None:
    return getattr(_local, "recorder", None)


class _Hook:
    """A class's recording lookup: how many recorders use it, and what it replaced."""

    def __init__(self, own: Any, lookup: Any) -> None:
        self.users = 1
        self.own = own  # the class's own `__getattribute__` (its __dict__'s), or None: put back when done
        self.lookup = lookup  # the lookup the class had, to pass every attribute on to


_hooked: dict[type, _Hook] = {}


def _getattribute(self: Any, name: str) -> Any:
    hook = _hooked.get(type(self))
    value = (hook.lookup if hook is not None else object.__getattribute__)(self, name)
    rec = _current()
    if rec is None:
        return value
    path = rec.paths.get(id(self))
    if path is None:
        return value
    if name in _WHOLE_NAMES:
        rec.read(path, WHOLE)
        return value
    try:
        fields = object.__getattribute__(self, "__dict__")
    except AttributeError:
        return value
    if name in fields:
        return rec.view(value, (*path, name))
    return value


def _hook(cls: type) -> None:
    with _lock:
        hook = _hooked.get(cls)
        if hook is not None:
            hook.users += 1
            return
        inherited = cls.__getattribute__
        lookup = object.__getattribute__ if inherited is _getattribute else inherited
        _hooked[cls] = _Hook(cls.__dict__.get("__getattribute__"), lookup)
        type.__setattr__(cls, "__getattribute__", _getattribute)


def _unhook(cls: type) -> None:
    with _lock:
        hook = _hooked[cls]
        hook.users -= 1
        if hook.users:
            return
        del _hooked[cls]
        if hook.own is None:
            type.__delattr__(cls, "__getattribute__")
        else:
            type.__setattr__(cls, "__getattribute__", hook.own)


def recorded(roots: Mapping[str, Any], call: Callable[[dict[str, Any]], T]) -> tuple[T, Reads]:
    """Call `call(views)` while noting what it reads of `roots` (each given under its name, the first segment of
    its paths), and return its result and the reads. `views` holds each root as the call must give it to the
    verifier: an object as it is (recorded in place), a dict or list as a recording copy."""
    rec = _Recorder()
    outer = _current()
    _local.recorder = rec
    try:
        views = {name: rec.view(root, (name,)) for name, root in roots.items()}
        rec.seen.clear()  # registering the roots read nothing
        result = call(views)
    finally:
        _local.recorder = outer
        for cls in rec.classes:
            _unhook(cls)
    return result, Reads.of(rec.seen)


# A container's methods that read it all (its equality, a pickle, its text), looked up by name.
_WHOLE_DUNDERS = frozenset({"__eq__", "__ne__", "__reduce_ex__", "__reduce__", "__repr__"})
_DICT_OWN = frozenset(
    {"__getitem__", "get", "__contains__", "keys", "__iter__", "__len__", "values", "items", "__class__"}
)


class _RecordingDict(dict):  # type: ignore[type-arg]
    """A copy of a dict that notes what is taken out of it."""

    __slots__ = ("_path", "_rec")

    def __init__(self, data: dict[Any, Any], rec: _Recorder, path: Path) -> None:
        super().__init__(data)
        object.__setattr__(self, "_rec", rec)
        object.__setattr__(self, "_path", path)

    def __getattribute__(self, name: str) -> Any:
        if (not name.startswith("_") or name in _WHOLE_DUNDERS) and name not in _DICT_OWN:
            object.__getattribute__(self, "_rec").read(object.__getattribute__(self, "_path"), WHOLE)
        return object.__getattribute__(self, name)

    def _child(self, key: Any) -> Any:
        return self._rec.view(dict.__getitem__(self, key), (*self._path, str(key)))

    def __getitem__(self, key: Any) -> Any:
        if not dict.__contains__(self, key):
            self._rec.read(self._path, KEYS)
            raise KeyError(key)
        return self._child(key)

    def get(self, key: Any, default: Any = None) -> Any:
        if not dict.__contains__(self, key):
            self._rec.read(self._path, KEYS)
            return default
        return self._child(key)

    def __contains__(self, key: object) -> bool:
        self._rec.read(self._path, KEYS)
        return dict.__contains__(self, key)

    def keys(self) -> Any:
        self._rec.read(self._path, KEYS)
        return dict.keys(self)

    def __iter__(self) -> Iterator[Any]:
        self._rec.read(self._path, KEYS)
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._rec.read(self._path, KEYS)
        return dict.__len__(self)

    def values(self) -> Any:
        self._rec.read(self._path, KEYS)
        return [self._child(k) for k in dict.keys(self)]

    def items(self) -> Any:
        self._rec.read(self._path, KEYS)
        return [(k, self._child(k)) for k in dict.keys(self)]

    def __eq__(self, other: object) -> bool:
        self._rec.read(self._path, WHOLE)
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


def _key(item: Any, i: int) -> str:
    """A list element's key as the oracle keys it: its `id`/`id_` when it has one, else its position."""
    for name in ("id", "id_"):
        try:
            found = item[name] if isinstance(item, dict) else object.__getattribute__(item, name)
        except (KeyError, AttributeError, TypeError):
            continue
        if isinstance(found, (str, int)):
            return str(found)
    return str(i)


_LIST_OWN = frozenset({"__getitem__", "__iter__", "__len__", "__contains__", "__class__", "__reversed__"})


class _RecordingList(list):  # type: ignore[type-arg]
    """A copy of a list that notes what is taken out of it."""

    __slots__ = ("_path", "_rec")

    def __init__(self, data: list[Any], rec: _Recorder, path: Path) -> None:
        super().__init__(data)
        object.__setattr__(self, "_rec", rec)
        object.__setattr__(self, "_path", path)

    def __getattribute__(self, name: str) -> Any:
        if (not name.startswith("_") or name in _WHOLE_DUNDERS) and name not in _LIST_OWN:
            object.__getattribute__(self, "_rec").read(object.__getattribute__(self, "_path"), WHOLE)
        return object.__getattribute__(self, name)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            self._rec.read(self._path, WHOLE)
            return list.__getitem__(self, index)
        n = list.__len__(self)
        i = index + n if isinstance(index, int) and index < 0 else index
        if isinstance(index, int) and index < 0:
            self._rec.read(self._path, KEYS)  # a position from the end depends on how many there are
        return self._element(i)

    def _element(self, i: int) -> Any:
        item = list.__getitem__(self, i)
        return self._rec.view(item, (*self._path, _key(item, i)))

    def __iter__(self) -> Iterator[Any]:
        self._rec.read(self._path, KEYS)
        for i in range(list.__len__(self)):
            yield self._element(i)

    def __reversed__(self) -> Iterator[Any]:
        self._rec.read(self._path, KEYS)
        for i in reversed(range(list.__len__(self))):
            yield self._element(i)

    def __len__(self) -> int:
        self._rec.read(self._path, KEYS)
        return list.__len__(self)

    def __contains__(self, item: object) -> bool:
        self._rec.read(self._path, WHOLE)
        return list.__contains__(self, item)

    def __eq__(self, other: object) -> bool:
        self._rec.read(self._path, WHOLE)
        return list.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]
