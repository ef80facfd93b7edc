"""The remote worker's protocol and verimut's Benchmark protocol name the same optional members.

worker.py runs in the benchmark's own interpreter and cannot import verimut, so it keeps its own lists of
the optional methods (CAPABILITIES) and attributes (ATTRIBUTES) it announces: read here from its source, and
tied to what verimut.core.benchmark declares (its CAPABILITIES, and the Adapter's other fields).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import sys
from pathlib import Path
from typing import Any

from verimut.adapters import remote, worker
from verimut.core.benchmark import CAPABILITIES, Adapter, resolve
from verimut.core.run import Action, AnswerChannel, Run

TESTS = Path(__file__).resolve().parents[1]


def _constants(path: Path) -> dict[str, Any]:
    """The module-level constants of a source file (tuples of strings, as worker.py writes them)."""
    found = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return found


WORKER = _constants(Path(worker.__file__))
# `options` is not the benchmark's to declare: adapters.load records the keywords its factory was given.
ATTRIBUTES = tuple(
    f.name for f in dataclasses.fields(Adapter) if f.name not in ("bench", "options") and f.name not in CAPABILITIES
)


def test_the_worker_announces_every_capability_benchmark_py_declares():
    assert WORKER["CAPABILITIES"] == CAPABILITIES


def test_the_worker_announces_every_attribute_the_adapter_reads():
    assert ATTRIBUTES  # grammar, concurrency, markers, ...: the Adapter's fields past the capabilities
    assert WORKER["ATTRIBUTES"] == ATTRIBUTES


def test_the_remote_adapter_declares_every_attribute_it_takes_from_the_worker():
    declared = remote.Remote.__annotations__
    assert [name for name in ATTRIBUTES if name not in declared] == []


def _load() -> tuple[Any, Any]:
    """worker.py as the benchmark's interpreter runs it (standard library only: it loads here too), and
    tests/remote_kinds.py, the worker-side adapter with every optional member (but the answer channel: `_answering`)."""
    spec = importlib.util.spec_from_file_location("standalone_worker", worker.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    spec = importlib.util.spec_from_file_location("remote_kinds", TESTS / "remote_kinds.py")
    assert spec is not None and spec.loader is not None
    kinds = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kinds)
    return module, kinds


# A worker-side adapter cannot import verimut: it declares its answer channel as AnswerChannel's fields.
CHANNEL = {"where": "the run's last submit(answer=...)", "tool": "submit", "arg": "answer"}


def _answering(kinds: Any) -> Any:
    """remote_kinds' Bench with an answer channel too: then it sets every optional attribute."""
    return type("Answering", (kinds.Bench,), {"answer_channel": CHANNEL})()


def test_the_worker_serves_every_capability_it_announces(tmp_path, monkeypatch):
    module, kinds = _load()
    server = module.Server(_answering(kinds))
    assert {name for name, member in server.optional.items() if member is not None} == set(CAPABILITIES)
    episode = server.call("reset", {"task": "t/add"})
    run = {"actions": [], "answer": ""}
    params = {
        "fork": {"episode": episode},
        "verify_as": {"task": "t/add", "episode": episode, "run": run},
        "explain": {"task": "t/add", "collections": ["items"]},
        "verifier_source": {"task": "t/add"},
        "form": {"task": "t/add"},
        "kind": {"task": "t/inject"},
        "reads_trace": {"task": "t/inject"},
        "idle_writes": {"task": "t/inject"},
        "patch": {"episode": episode, "path": ["log"], "value": ["seen"]},
        "page_writes": {"task": "t/add", "run": run},
        "verify_reading": {"episode": episode, "run": run},
        "prepare": {},
        "pristine": {"task": "t/add"},
        "sanctioned": {"task": "t/add"},
    }
    monkeypatch.setenv("REMOTE_KINDS_CLOSED", str(tmp_path / "closed"))
    answers = {name: server.call(name, params[name]) for name in CAPABILITIES if name != "close"}
    assert answers["kind"] == "injection" and answers["reads_trace"] is True and answers["idle_writes"] == [0]
    assert answers["form"]["task_fields"] == ["item"]
    assert answers["prepare"] is None and server.call("provenance", {})["prepared"] == "T/ADD,T/INJECT"
    assert answers["pristine"] == {"items": [], "log": []} and answers["sanctioned"] == ["add_item"]
    assert answers["page_writes"] == [{"name": "add_item", "args": {"text": "milk"}}]
    assert server.call("snapshot", {"episode": episode})["log"] == ["seen"]
    assert server.call("close", {"episode": episode}) is None
    assert (tmp_path / "closed").read_text() == "t/add\n"
    announced = module.attributes(server.adapter)
    assert list(announced) == list(ATTRIBUTES)  # this adapter sets every one
    assert announced["markers"] == ["turn"] and announced["trace_args"] == {"send": ["to"]}
    assert announced["answer_channel"] == CHANNEL


def test_a_worker_adapter_without_optional_members_announces_none():
    module, kinds = _load()
    plain = module.Server(kinds.Plain())
    assert all(member is None for member in plain.optional.values())
    assert module.attributes(kinds.Plain()) == {}


_WORKER_SIDE = """
class Answering:
    name, version, telemetry = "answering", "1", ()
    answer_channel = {channel!r}

    def provenance(self):
        return {{}}

    def tasks(self):
        return ["t"]
"""


def test_the_answer_channel_crosses_the_seam_as_an_answer_channel(tmp_path):
    """The worker announces the mapping; `resolve` makes the remote adapter's an AnswerChannel that reads and
    edits the answer in the run's last call of its tool, as an in-process adapter's does."""
    (tmp_path / "answering.py").write_text(_WORKER_SIDE.format(channel=CHANNEL))
    served = remote.Remote(sys.executable, "answering:Answering", timeout=30, cwd=tmp_path)
    try:
        channel = resolve(served).answer_channel
    finally:
        served._kill()
    assert channel == AnswerChannel(**CHANNEL)
    run = Run((Action("submit", {"answer": "3"}), Action("submit", {"answer": "4", "status": "ok"})))
    assert channel.read(run) == "4"
    assert channel.write(run, "").actions[-1] == Action("submit", {"status": "ok"})


def test_a_worker_without_an_answer_channel_leaves_the_answer_families_none():
    module, kinds = _load()
    assert "answer_channel" not in module.attributes(kinds.Bench())
    assert resolve(kinds.Plain()).answer_channel is None
