"""A verifier that grades the calls' outputs (as BFCL's does), and a reference write that changes nothing.

tests/loginbench.py: `login/post` asks for a post on an account already logged in; the reference logs in again
(a no-op that answers a status) and posts. The adapter names that login in `idle_writes`, so a run that leaves it
out ends as the reference does and is a false reject; a login with a wrong password and a dropped post stay
rejected. The same benchmark without `idle_writes` rejects every run whose calls differ (the trace rule).
"""

from __future__ import annotations

import json

import pytest

from conftest import verimut


def _outcomes(tmp_path_factory: pytest.TempPathFactory, name: str) -> dict[str, str]:
    out = tmp_path_factory.mktemp("idle") / name
    r = verimut("audit", f"tests.loginbench:{name}", "--out", str(out), "--executor", "inprocess", "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    return {x["cell_id"]: x["outcome"] for x in map(json.loads, (out / "cells.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def idle(tmp_path_factory) -> dict[str, str]:
    return _outcomes(tmp_path_factory, "benchmark")


@pytest.fixture(scope="module")
def strict(tmp_path_factory) -> dict[str, str]:
    return _outcomes(tmp_path_factory, "benchmark_strict")


def test_leaving_out_a_login_that_changed_nothing_is_a_false_reject(idle):
    assert idle["login/post:omit:at-0"] == "false_reject"
    assert [c for c, o in idle.items() if o == "false_reject"] == ["login/post:omit:at-0"]


def test_another_call_or_a_dropped_effect_is_still_told_apart_by_the_trace(idle):
    assert idle["login/post:wrong-value:0.password"] == "rejected"  # a login that errs: not a left-out one
    assert idle["login/post:omit"] == "rejected"  # the post left out: the state differs
    assert idle["login/fresh:omit:at-0"] == "rejected"  # a login that logs in: not idle


def test_without_idle_writes_every_run_whose_calls_differ_is_rejected(strict):
    assert strict["login/post:omit:at-0"] == "rejected"
    assert "false_reject" not in strict.values()
