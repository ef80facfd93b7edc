"""The package's face: what an adapter imports is at `verimut`, and the old module paths still work, warning once."""

from __future__ import annotations

import subprocess
import sys

import verimut
from verimut.core import benchmark, run


def test_an_adapter_finds_the_vocabulary_and_the_protocol_at_the_face():
    assert (verimut.Action, verimut.Run, verimut.Step, verimut.Verdict) == (run.Action, run.Run, run.Step, run.Verdict)
    assert verimut.Benchmark is benchmark.Benchmark
    # Every capability the protocol declares has its type at the face.
    for name in ("Forks", "Swaps", "Explains", "Locates", "DescribesForms", "Kinds", "ReadsTrace", "Patches", "Closes"):
        assert getattr(verimut, name) is getattr(benchmark, name)
    assert set(verimut.__all__) <= set(dir(verimut))


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "default::DeprecationWarning", "-c", code], check=False, capture_output=True, text=True
    )


def test_the_old_paths_work_and_warn():
    for old, new, name in (
        ("benchmark", "core.benchmark", "Verdict"),
        ("run", "core.run", "Run"),
        ("errors", "core.errors", "AuditError"),
    ):
        done = _python(f"from verimut.{old} import {name}; import verimut.{new} as m; assert {name} is m.{name}")
        assert done.returncode == 0, done.stderr
        assert f"verimut.{old} is deprecated" in done.stderr and f"verimut.{new}" in done.stderr


def test_importing_the_face_does_not_load_the_pipeline():
    done = _python("import sys, verimut; print(sorted(m for m in sys.modules if m.startswith('verimut.')))")
    loaded = eval(done.stdout)  # our own output: a list of names
    assert "verimut.api" not in loaded and not any(m.startswith(("verimut.engine", "verimut.outputs")) for m in loaded)


def test_the_public_api_names_its_functions():
    from verimut import api

    assert [n for n in api.__all__ if callable(getattr(api, n)) and not n[0].isupper()] == [
        "audit",
        "repair",
        "summarize",
        "swap",
    ]
