"""A remote adapter keeps every optional capability and attribute its worker-side adapter has (kind, grammar, form, ...)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import verimut
from verimut.adapters.remote import Remote
from verimut.core.benchmark import CAPABILITIES, Action, resolve
from verimut.core.forms import FormFacts, FormField

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def served():
    """Start a `Remote` of one of tests/remote_kinds.py's adapters; its worker is stopped after the test."""
    made: list[Remote] = []

    def start(name: str, **env: str) -> Remote:
        made.append(Remote(sys.executable, f"tests.remote_kinds:{name}", timeout=30, cwd=ROOT, env=env))
        return made[-1]

    yield start
    for r in made:
        r._kill()


def test_a_remote_adapter_has_each_capability_and_attribute_its_worker_announces(served, tmp_path):
    closed = tmp_path / "closed"
    bench = resolve(served("Bench", REMOTE_KINDS_CLOSED=str(closed)))
    assert [name for name in CAPABILITIES if getattr(bench, name) is None] == []
    assert bench.grammar == "form"
    assert bench.kind is not None and bench.kind("t/inject") == "injection" and bench.kind("t/add") == "user"
    assert bench.contracts == {"injection": "goal"}
    assert bench.form is not None
    assert bench.form("t/add") == FormFacts("list", ["item"], [FormField("item", "Item", "string", "", "milk")])
    assert bench.reads_trace is not None and bench.reads_trace("t/inject") and not bench.reads_trace("t/add")
    assert (bench.concurrency, bench.markers, bench.swap_suites, bench.grades_in_place) == (2, {"turn"}, ("t",), True)
    assert bench.replays_vary is True
    assert (bench.assigned_keys, bench.trace_args, bench.target_args) == (("items",), {"send": ("to",)}, {"owner"})
    assert bench.explain is not None and "reads only whether" in str(bench.explain("t/add", ["items"]))
    assert bench.verifier_source is not None and bench.verifier_source("t/add") == (
        "remote_kinds.py",
        52,
        "Bench.verify",
    )
    episode = bench.reset("t/add")
    bench.execute(episode, Action("add_item", {"text": "milk"}))
    assert bench.patch is not None and bench.fork is not None and bench.verify_as is not None
    bench.patch(episode, ["log"], ["seen"])
    assert bench.snapshot(episode) == {"items": ["milk"], "log": ["seen"]}
    forked = bench.fork(episode)
    assert bench.verify_as("t/inject", forked, bench.reference("t/add", episode)).detail == "as t/inject"
    assert bench.close is not None
    bench.close(episode)  # answered once the worker's adapter has closed it
    assert closed.read_text() == "t/add\n"
    del forked  # a handle dropped is closed too, at the next call
    assert bench.tasks() == ["t/add", "t/inject"]
    assert closed.read_text() == "t/add\nt/add\n"


def test_a_remote_adapter_whose_worker_has_no_optional_member_offers_none(served):
    bench = resolve(served("Plain"))
    assert [name for name in CAPABILITIES if getattr(bench, name) is not None] == []
    assert (bench.grammar, bench.concurrency, bench.markers, bench.contracts) == ("api", None, frozenset(), {})
    assert (bench.grades_in_place, bench.assigned_keys, bench.trace_args, bench.target_args) == (False, (), {}, set())
    assert bench.replays_vary is False


def test_an_audit_of_a_remote_benchmark_keeps_its_task_kinds_and_its_grammar(tmp_path):
    out = tmp_path / "kinds"
    result = verimut("audit", "tests.remote_bench:kinds", "--out", str(out), "-q")
    assert result.returncode == 0, result.stderr
    m = json.loads((out / "manifest.json").read_text())
    # the form grammar's families (the worker-side adapter's grammar), not the api grammar's default
    assert "extra-field" in m["families"] and "extra" not in m["families"]
    tasks = m["tasks"]
    assert {t: (f["kind"], f["contract"]) for t, f in tasks.items()} == {
        "t/add": ("user", "effect"),
        "t/inject": ("injection", "goal"),
    }
    assert tasks["t/add"]["form"]["task_fields"] == ["item"]
    assert m["assigned_keys"] == ["items"] and m["trace_args"] == {"send": ["to"]}
    assert m["provenance"]["prepared"] == "T/ADD,T/INJECT"  # its `prepare` ran in the worker, before provenance
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["counts_by_kind"]) == ["user", "injection"]
