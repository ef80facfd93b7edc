"""A benchmark worker: serves a benchmark to verimut over JSON lines, in the benchmark's own interpreter.

Some benchmarks cannot share an interpreter with verimut (AppWorld pins pydantic 1; verimut's
AgentDojo needs pydantic 2). Such a benchmark runs in its own environment, in this process:

    /path/to/their/python /path/to/verimut/worker.py module:object

This file imports nothing but the standard library (it runs where verimut is not installed).
`module:object` is a worker-side adapter: the methods of `verimut.core.benchmark.Benchmark`, in
plain JSON terms (an action is {"name", "args"}, a run {"actions", "answer"}, a step
{"output", "error"}, a verdict {"passed", "detail", "checks"}), where `reset` returns an
episode object that stays here: verimut gets a handle for it.

Protocol: one JSON object per line each way. verimut sends {"id", "method", "params"}; the
worker answers {"id", "result"} or {"id", "error"} (the adapter raised: the message, one line).
The first line the worker writes is {"ready": {"name", "version", "telemetry", CAPABILITIES..., "attributes"}}:
each of CAPABILITIES (the optional methods: "fork", "verify_as", ..., "patch") is true when the adapter has that
method, and verimut offers only those; "attributes" holds each of ATTRIBUTES (the optional attributes: "grammar",
"concurrency", ...) that the adapter sets, as JSON (a set or tuple as a list). Both lists are
verimut.core.benchmark's, which says what each does (tests/unit/test_worker_protocol.py ties them). A
`close(episode)` method, when there is one, is called for each episode verimut lets go (a handle it drops, or
closes). End of input ends the worker.

An adapter whose own machinery can fail under it (a browser that closes) may have `broken(error) -> bool`: an error
it calls broken is answered {"id", "error", "infrastructure": true}, and verimut ends this worker, starts another
at its next call, and scores the cell again; any other error is the benchmark's.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import traceback
from typing import Any


def _load(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    # Run as a script, this file's folder (verimut/adapters/) comes first on sys.path, and its adapters' folders
    # are named as the benchmarks are: `import appworld` would find verimut's adapter, not AppWorld. Nothing
    # here is imported from that folder, so it goes.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    sys.path.insert(0, os.getcwd())
    obj = getattr(importlib.import_module(module_name), attr)
    return obj() if isinstance(obj, type) else obj


# The optional methods verimut may call (verimut.core.benchmark.CAPABILITIES), announced in the first line.
CAPABILITIES = (
    "fork",
    "verify_as",
    "explain",
    "verifier_source",
    "form",
    "close",
    "kind",
    "reads_trace",
    "idle_writes",
    "patch",
    "page_writes",
    "verify_reading",
    "prepare",
    "pristine",
    "sanctioned",
)
# The optional attributes verimut reads (the other fields of verimut.core.benchmark.Adapter), announced with
# their values.
ATTRIBUTES = (
    "grammar",
    "concurrency",
    "markers",
    "swap_suites",
    "grades_in_place",
    "replays_vary",
    "contracts",
    "assigned_keys",
    "trace_args",
    "target_args",
    "answer_channel",  # a mapping {"where", "tool", "arg"}: verimut's AnswerChannel, in JSON terms
)


def _method(adapter: Any, name: str) -> Any:
    member = getattr(adapter, name, None)
    return member if callable(member) else None


def _plain(value: Any) -> Any:
    """An attribute's value as JSON data: a set sorted into a list, a tuple a list, a mapping's keys strings."""
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def attributes(adapter: Any) -> dict[str, Any]:
    """The optional attributes the adapter sets (None counts as unset), as JSON data."""
    found = {name: getattr(adapter, name, None) for name in ATTRIBUTES}
    return {name: _plain(value) for name, value in found.items() if value is not None}


class Server:
    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.episodes: dict[int, Any] = {}
        self.next = 0
        # Looked up once: this interpreter cannot import verimut's own resolution (verimut.core.benchmark).
        self.optional = {name: _method(adapter, name) for name in CAPABILITIES}
        self.close = self.optional["close"]

    def _keep(self, episode: Any) -> int:
        self.next += 1
        self.episodes[self.next] = episode
        return self.next

    def _episode(self, handle: int) -> Any:
        return self.episodes[handle]

    def call(self, method: str, p: dict[str, Any]) -> Any:
        a = self.adapter
        if method == "provenance":
            return a.provenance()
        if method == "tasks":
            return list(a.tasks())
        if method == "instruction":
            return a.instruction(p["task"])
        if method == "reset":
            return self._keep(a.reset(p["task"]))
        if method == "reference":
            return a.reference(p["task"], self._episode(p["episode"]))
        if method == "execute":
            return a.execute(self._episode(p["episode"]), p["action"])
        if method == "is_write":
            return bool(a.is_write(p["action"]))
        if method == "snapshot":
            return a.snapshot(self._episode(p["episode"]))
        if method == "verify":
            return a.verify(self._episode(p["episode"]), p["run"])
        if method == "close":  # served without the adapter's `close` too: the handle is let go here
            episode = self.episodes.pop(p["episode"], None)
            if episode is not None and self.close is not None:
                self.close(episode)
            return None
        if method in CAPABILITIES and self.optional[method] is None:
            raise ValueError(f"the adapter has no {method}")
        if method == "verify_as":
            return a.verify_as(p["task"], self._episode(p["episode"]), p["run"])
        if method == "fork":
            return self._keep(a.fork(self._episode(p["episode"])))
        if method == "explain":
            return a.explain(p["task"], p["collections"])
        if method == "verifier_source":
            found = a.verifier_source(p["task"])
            return list(found) if found is not None else None
        if method == "form":
            return a.form(p["task"])
        if method == "kind":
            return str(a.kind(p["task"]))
        if method == "reads_trace":
            return bool(a.reads_trace(p["task"]))
        if method == "idle_writes":
            return [int(i) for i in a.idle_writes(p["task"])]
        if method == "patch":
            a.patch(self._episode(p["episode"]), list(p["path"]), p["value"])
            return None
        if method == "page_writes":
            return list(a.page_writes(p["task"], p["run"]))
        if method == "pristine":
            return a.pristine(p["task"])
        if method == "sanctioned":
            return [str(t) for t in a.sanctioned(p["task"])]
        if method == "prepare":  # the worker's own work, in the worker, one item after another
            a.prepare(lambda fn, items: map(fn, items))
            return None
        if method == "verify_reading":  # (verdict, reads): reads as {"value": [...], "keys": [...], "whole": [...]}
            verdict, reads = a.verify_reading(self._episode(p["episode"]), p["run"])
            return [verdict, reads]
        raise ValueError(f"unknown method {method!r}")


def _die_with_parent() -> None:
    """On Linux, be killed when the process that started this one dies.

    A worker hung inside the benchmark never reads the end of its input, so a verimut worker
    cut at the per-cell timeout would otherwise leave it running.
    """
    parent = os.getppid()
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request was in place
        sys.exit(0)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or ":" not in argv[0]:
        print("usage: worker.py module:object", file=sys.stderr)
        return 2
    _die_with_parent()
    # A Ctrl-C to the terminal's process group reaches this worker too: verimut, its parent, stops it (SIGKILL, or
    # by dying), so here it must print no traceback of its own. A handler, not SIG_IGN: SIG_IGN would survive exec
    # into a browser or server the benchmark starts, which would then ignore the SIGTERM meant to stop it.
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, lambda *_: None)
    adapter = _load(argv[0])
    # The protocol owns stdout: anything the benchmark prints goes to stderr instead.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout = sys.stderr
    server = Server(adapter)
    broken = _method(adapter, "broken")
    hello = {
        "name": adapter.name,
        "version": adapter.version,
        "telemetry": list(adapter.telemetry),
        **{name: member is not None for name, member in server.optional.items()},
        "attributes": attributes(adapter),
    }
    out.write(json.dumps({"ready": hello}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            reply = {"id": request["id"], "result": server.call(request["method"], request.get("params", {}))}
        except Exception as e:  # noqa: BLE001  (the adapter's error goes back to verimut, which records it)
            detail = traceback.format_exc(limit=3)
            reply = {"id": request["id"], "error": f"{type(e).__name__}: {e}", "traceback": detail}
            if broken is not None and broken(e):
                reply["infrastructure"] = True
        out.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
