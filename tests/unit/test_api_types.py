"""The Python API given arguments of the wrong type (issue 43, minor list): one line naming the argument, as
`verimut.AuditError`, before any work (0.4: a raw AttributeError or TypeError; `suites="banking"` read as the
suites "b", "a", "n", ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from verimut import api
from verimut.core.errors import AuditError

TODO = "examples.todo_bench:benchmark"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"suites": "todo"}, "suites must be a list of names, not the string 'todo': suites=['todo']"),
        ({"tasks": "todo/add_milk"}, "tasks must be a list of names, not the string 'todo/add_milk'"),
        ({"families": [1]}, "families must be a list of names (str), not list"),
        ({"kinds": 3}, "kinds must be a list of names (str), not int"),
        ({"workers": "2"}, "workers must be a number, not str"),
        ({"timeout": True}, "timeout must be a number, not bool"),
        ({"options": "n=4"}, "options must be a mapping of names to values, not str"),
        ({"version": 1}, "version must be a str, not int"),
        ({"against": 3}, "against must be a path (str or pathlib.Path), not int"),
    ],
)
def test_audit_names_the_argument_of_the_wrong_type(given: dict[str, Any], said: str, tmp_path: Path):
    with pytest.raises(AuditError) as raised:
        api.audit(TODO, tmp_path / "out", **given)
    assert str(raised.value) == said or str(raised.value).startswith(said)
    assert not (tmp_path / "out").exists()


def test_a_benchmark_or_a_directory_of_the_wrong_type_is_named(tmp_path: Path):
    with pytest.raises(AuditError, match=r"^benchmark must be a name \(str\) or an adapter object .*, not int$"):
        api.audit(3, tmp_path / "out")  # type: ignore[arg-type]
    with pytest.raises(AuditError, match=r"^out must be a path \(str or pathlib.Path\), not list$"):
        api.audit(TODO, ["out"])  # type: ignore[arg-type]
    with pytest.raises(AuditError, match=r"^directory must be a path .*, not NoneType$"):
        api.repair(None)  # type: ignore[arg-type]
    with pytest.raises(AuditError, match=r"^suites must be a list of names, not the string"):
        api.swap(TODO, tmp_path / "s", suites="todo")
