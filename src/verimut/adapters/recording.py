"""A recording view of in-process Python state: what a verifier reads of the objects it is given, while it runs.

`recorded(roots, call)` calls `call()` (the benchmark's unmodified verifier) and returns what it returned and
the paths it read under each root (core/reads.py says what a read is). Nothing of the verifier is changed:

- objects (pydantic models, plain class instances): for the length of the call, their classes get a
  `__getattribute__` that notes each instance attribute taken from an object reached from a root, and passes
  every lookup on to the class's own. Methods run as they are; the fields they take are noted in turn. Taking
  `__dict__`, a dump or a copy reads the object whole (how a diff reads). An equality between two objects of
  one class (`pre_environment == post_environment`) is done field by field, stopping at the first that differs,
  as the class's own would: it reads what it compared, not what it never reached;
  The classes are put back as they were when the call ends (also when it raises);
- dicts and lists reached from a root are handed out as recording copies of themselves (a dict or list
  subclass, so `isinstance` and equality hold): a key taken is a value read, listing or counting their
  members a keys read, an equality key by key (as above), anything else (a slice, a method not below) a whole
  read. Being shallow
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

    def same(self, path: Path, value: Any) -> None:
        """An equality found `value` at `path` to be the very object it was compared with: its verdict rests on
        all of it."""
        self.read(path, VALUE if isinstance(value, _SCALARS) else WHOLE)

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
    """A class's recording members: how many recorders use them, and what they replaced."""

    def __init__(self, cls: type) -> None:
        self.users = 1
        # The class's own members (its __dict__'s), or None: put back, or deleted, when done.
        self.own = {name: cls.__dict__.get(name) for name in _HOOKED}
        inherited = cls.__getattribute__
        self.lookup = object.__getattribute__ if inherited is _getattribute else inherited
        self.eq = cls.__eq__  # the equality it had, called where a comparison is not one of recorded objects


_hooked: dict[type, _Hook] = {}


def _getattribute(self: Any, name: str) -> Any:
    hook = _hooked.get(type(self))
    lookup: Any = hook.lookup if hook is not None else object.__getattribute__
    value = lookup(self, name)
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


def _eq(self: Any, other: Any) -> Any:
    """An equality of objects of one class, field by field in their order, stopping at the first that differs, as a
    dataclass's or pydantic's does: so a comparison that stops at `inbox` reads nothing of `calendar`."""
    rec = _current()
    hook = _hooked.get(type(self))
    fallback: Any = hook.eq if hook is not None else object.__eq__
    if rec is None or type(other) is not type(self):
        return fallback(self, other)
    if id(self) not in rec.paths and id(other) in rec.paths:
        self, other = other, self  # pre == post: read from the recorded side
    path = rec.paths.get(id(self))
    mine, theirs = _fields_of(self), _fields_of(other)
    if path is None or mine is None or theirs is None or set(mine) != set(theirs) or _extras_differ(self, other):
        return fallback(self, other)
    for name, value in mine.items():
        if value is theirs[name]:
            rec.same((*path, name), value)
            continue
        if not rec.view(value, (*path, name)) == theirs[name]:  # noqa: SIM201  (an equality, as the class's: not `!=`)
            return False
    return True


def _fields_of(obj: Any) -> dict[str, Any] | None:
    try:
        found = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return None
    return found if isinstance(found, dict) else None


def _extras_differ(a: Any, b: Any) -> bool:
    """What a pydantic equality also compares besides the fields (private attributes, extra fields)."""
    for name in ("__pydantic_private__", "__pydantic_extra__"):
        try:
            if object.__getattribute__(a, name) != object.__getattribute__(b, name):
                return True
        except AttributeError:
            continue
    return False


_HOOKED = ("__getattribute__", "__eq__")


def _hook(cls: type) -> None:
    with _lock:
        hook = _hooked.get(cls)
        if hook is not None:
            hook.users += 1
            return
        _hooked[cls] = _Hook(cls)
        type.__setattr__(cls, "__getattribute__", _getattribute)
        if cls.__eq__ is not object.__eq__:  # a class with no equality of its own compares by identity: kept
            type.__setattr__(cls, "__eq__", _eq)


def _unhook(cls: type) -> None:
    with _lock:
        hook = _hooked[cls]
        hook.users -= 1
        if hook.users:
            return
        del _hooked[cls]
        for name, own in hook.own.items():
            if own is not None:
                type.__setattr__(cls, name, own)
            elif name in cls.__dict__:
                type.__delattr__(cls, name)


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

    def __eq__(self, other: object) -> Any:
        """dict's equality, key by key in order, stopping at the first that differs (what it read, and no more)."""
        if not isinstance(other, dict):
            return NotImplemented
        self._rec.read(self._path, KEYS)
        if dict.__len__(self) != dict.__len__(other):
            return False
        for key in dict.keys(self):
            if not dict.__contains__(other, key):
                return False
            mine, theirs = dict.__getitem__(self, key), dict.__getitem__(other, key)
            if mine is theirs:
                self._rec.same((*self._path, str(key)), mine)
            elif not self._child(key) == theirs:
                return False
        return True

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

    def __eq__(self, other: object) -> Any:
        """list's equality, element by element, stopping at the first that differs."""
        if not isinstance(other, list):
            return NotImplemented
        self._rec.read(self._path, KEYS)
        if list.__len__(self) != list.__len__(other):
            return False
        for i in range(list.__len__(self)):
            mine, theirs = list.__getitem__(self, i), list.__getitem__(other, i)
            if mine is theirs:
                self._rec.same((*self._path, _key(mine, i)), mine)
            elif not self._element(i) == theirs:
                return False
        return True

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]
