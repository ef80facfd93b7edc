"""Where a benchmark's answers enter verimut: checked once, at the seam, so no later stage trusts a plug-in's types.

- A verdict's `passed` (and each check) is a real bool: a truthy string ("no") counted as a pass would make
  false accepts that are not there. numpy's bool is taken as the bool it is; anything else is `VerdictError`,
  which the scorer records as that cell's error (never as a verdict).
- A snapshot is plain data (docs/adapters.md#what-verimut-checks-at-the-seam): a set becomes a list in one
  order (a set has none, so comparing it as one would depend on hashing), a numpy scalar its Python value; a
  key that is not a string, a structure that contains itself, or any other object is `AuditError` naming where
  it sits in the snapshot.
- Benchmark code that calls `sys.exit` raises `BenchmarkExit` instead: that call's error, not verimut's exit.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import math
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from verimut.core.errors import AuditError
from verimut.core.run import Run, Verdict

R = TypeVar("R")

# The longest reference answer verimut audits: an answer is a reply, and each of a task's edited runs carries a
# copy (a 10.8 MB answer made a 104 MB manifest of one task's cells).
ANSWER_MOST = 1024 * 1024

DEPTH = 200  # deeper than any real state; a structure this deep is most likely one that contains itself


class VerdictError(TypeError):
    """A verifier answered with something that is not a verdict of bools."""


class BenchmarkExit(RuntimeError):
    """Benchmark code raised SystemExit (called sys.exit) during one of verimut's calls into it."""


def call(fn: Callable[..., R], *args: Any) -> R:
    """fn(*args), with a SystemExit from benchmark code turned into an ordinary error of this call."""
    try:
        return fn(*args)
    except SystemExit as e:
        raise BenchmarkExit(f"{getattr(fn, '__qualname__', fn)} called sys.exit({e.code!r})") from None


def reference_run(value: object, bench: str, task: str) -> Run:
    """A reference run as verimut reads it: a Run whose answer is text. Anything else is the adapter's mistake,
    said in one line (an answer of bytes or None used to end the manifest build in an internal error)."""
    if not isinstance(value, Run):
        raise AuditError(f"{bench}'s reference({task!r}) returned {type(value).__name__}, not a Run")
    if not isinstance(value.answer, str):
        raise AuditError(
            f"{bench}'s reference run for {task!r} has an answer of type {type(value.answer).__name__} "
            f'({_shown(value.answer)}), not str: give the answer as text ("" for none)'
        )
    if len(value.answer) > ANSWER_MOST:
        raise AuditError(
            f"{bench}'s reference run for {task!r} has an answer of {len(value.answer):,} characters: verimut audits "
            f"answers of at most {ANSWER_MOST:,} (every edited run carries it); audit the other tasks with --task"
        )
    return value


def _shown(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _is_numpy(value: object, *names: str) -> bool:
    kind = type(value)
    return kind.__module__ == "numpy" and kind.__name__ in names


def truth(value: object, what: str) -> bool:
    if isinstance(value, bool):
        return value
    if _is_numpy(value, "bool_", "bool"):
        return bool(value)
    raise VerdictError(f"{what} is {type(value).__name__} ({_shown(value)}), not a bool")


def verdict(answer: object) -> Verdict:
    """The verifier's answer as a Verdict whose `passed` and checks are bools (see the module's docstring)."""
    if not isinstance(answer, Verdict):
        raise VerdictError(f"the verifier returned {type(answer).__name__}, not a Verdict")
    passed = truth(answer.passed, "Verdict.passed")
    checks = answer.checks
    if not isinstance(checks, dict):
        raise VerdictError(f"Verdict.checks is {type(checks).__name__}, not a dict of bools")
    fixed = {str(name): truth(v, f"Verdict.checks[{name!r}]") for name, v in checks.items()}
    detail = answer.detail if isinstance(answer.detail, str) else repr(answer.detail)
    reward = number(answer.reward, "Verdict.reward") if answer.reward is not None else None
    same = passed is answer.passed and detail is answer.detail and reward is answer.reward
    if same and all(fixed[str(k)] is v for k, v in checks.items()):
        return answer
    return Verdict(passed, detail, fixed, reward)


def number(value: object, what: str) -> float:
    """A reward as a finite float: a bool, a string, None, NaN or an infinity is `VerdictError` (never a reward)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not _is_numpy(value, *_NUMPY_NUMBERS):
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise VerdictError(f"{what} is {type(value).__name__} ({shown}), not a number")
    out = float(value)  # type: ignore[arg-type]
    if not math.isfinite(out):
        raise VerdictError(f"{what} is {out}, not a finite number")
    return out


# --- snapshots ----------------------------------------------------------------------------------

_SCALAR = frozenset({str, int, float, bool, type(None)})
# What msgspec encodes as a JSON scalar (verimut's canonical form: oracle.canonical), besides the builtins.
_ALSO = (str, int, float, enum.Enum, datetime.date, datetime.time, datetime.timedelta, uuid.UUID, decimal.Decimal)


_NUMPY_NUMBERS = tuple(f"{k}{n}" for k in ("int", "uint", "float") for n in (8, 16, 32, 64) if k != "float" or n > 8)
_NUMPY_SCALARS = ("bool_", "bool", "str_", *(f"{k}{n}" for k in ("int", "uint") for n in (8, 16, 32, 64)))
_NUMPY_SCALARS += ("float16", "float32", "float64")


class _Walk:
    def __init__(self, bench: str) -> None:
        self.bench = bench
        self.open: set[int] = set()  # the containers on the path being walked: one met again contains itself

    def fail(self, path: str, problem: str) -> AuditError:
        return AuditError(
            f"{self.bench}'s snapshot is not plain data: {path} {problem} (a snapshot holds dicts with string "
            "keys, lists and scalars: docs/adapters.md#what-verimut-checks-at-the-seam)"
        )

    def value(self, v: Any, path: str, depth: int) -> Any:
        kind = type(v)
        if kind in _SCALAR:
            return v
        if kind is dict or kind is list or kind is tuple or isinstance(v, (set, frozenset)):
            if depth > DEPTH:
                raise self.fail(path, f"is nested more than {DEPTH} levels deep")
            if id(v) in self.open:
                raise self.fail(path, "contains itself (a structure that refers back to an enclosing one)")
            self.open.add(id(v))
            try:
                return self._container(v, path, depth + 1)
            finally:
                self.open.discard(id(v))
        if isinstance(v, _ALSO):
            return v
        if _is_numpy(v, *_NUMPY_SCALARS):
            return v.item()
        raise self.fail(path, f"is a {kind.__module__}.{kind.__qualname__}")

    def _container(self, v: Any, path: str, depth: int) -> Any:
        if isinstance(v, dict):
            out: dict[str, Any] | None = None
            for k, x in v.items():
                if not isinstance(k, str):
                    raise self.fail(f"{path}[{k!r}]", f"has a key of type {type(k).__name__}")
                y = x if type(x) in _SCALAR else self.value(x, f"{path}.{k}", depth)
                if y is not x and out is None:
                    out = dict(v)
                if out is not None:
                    out[k] = y
            return v if out is None else out
        if isinstance(v, (set, frozenset)):
            items = [self.value(x, f"{path}[*]", depth) for x in v]
            return sorted(items, key=lambda x: msgspec.json.encode(x, order="sorted"))
        new = [x if type(x) in _SCALAR else self.value(x, f"{path}[{i}]", depth) for i, x in enumerate(v)]
        return v if all(a is b for a, b in zip(new, v, strict=True)) else type(v)(new)


def plain(snapshot: Any, bench: str) -> Any:
    """The snapshot as plain data: itself when it already is (no copy), else with sets and numpy scalars converted."""
    return _Walk(bench).value(snapshot, "$", 0)
