"""Check measured read sets by another instrument: AgentDojo's verifiers run under `sys.settrace`.

    .venv/bin/python precision/read_sets_agentdojo.py AUDIT_DIR CHANGED.json [--seed 42] [--sample 20] [--out F]

CHANGED.json is `bench/bench_read_sets.py reasons`'s output: the false accepts whose reason changed from the
source-text search to the measurement. A seeded sample of them is replayed with AgentDojo's own API (the task's
clean environment as TaskSuite builds it, the cell's run from manifest.json through FunctionsRuntime.run_function,
graded as TaskSuite grades: `utility_from_traces`, else `utility`), the verifier running under a `sys.settrace`
tracer. Never imports verimut, and shares nothing with its recorder: at every line the verifier (or anything it
calls) executes, the tracer

- evaluates, in that frame, each attribute/subscript chain the line's source holds (no calls in it), and
- looks at the frame's local variables and at each value a function returns,

and a collection of the end state counts as read when one of those is its container, one of its records, or (a
collection of scalar fields, `user_account`) a field taken off the object that holds them. Each differing collection
of the finding is then "read" or "never" by the tracer, set beside what the measured reason says. The judgement
(holds / disputed / wrong) is a person's, written into docs/precision/read-sets.json.
"""

from __future__ import annotations

import argparse
import ast
import json
import linecache
import os
import random
import sys
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE] + [HERE]

NEW = " (new)"
SCALARS = (str, int, float, bool, type(None))


def _fields(obj: Any) -> dict[str, Any] | None:
    from pydantic import BaseModel

    if isinstance(obj, BaseModel):
        return {n: getattr(obj, n) for n in type(obj).model_fields if not n.startswith("initial_")}
    return obj if isinstance(obj, dict) else None


def _id_key(items: list[Any]) -> str | None:
    for f in ("id", "id_"):
        fields = [_fields(x) for x in items]
        if items and all(d is not None and f in d for d in fields):
            ids = [str(d[f]) for d in fields if d is not None]
            if len(set(ids)) == len(ids):
                return f
    return None


def _is_record_map(node: dict[str, Any]) -> bool:
    values = [_fields(v) for v in node.values()]
    if not all(v is not None for v in values) or len({frozenset(v) for v in values if v is not None}) > 1:
        return False
    if len(values) != 1:
        return True
    [(key, value)] = node.items()
    value_fields = _fields(value) or {}
    return str(key).isdigit() or any(f in value_fields for f in ("id", "id_"))


class Places:
    """Where each collection of an environment lives, by object identity (the oracle's reading of a state, done
    here again on the live objects: a list is a collection, a dict of like records is one, scalar fields are one)."""

    def __init__(self, env: Any) -> None:
        self.containers: dict[int, str] = {}
        self.records: dict[int, str] = {}
        self.holders: dict[int, tuple[str, set[str]]] = {}  # object holding scalar fields -> (collection, fields)
        self.keep: list[Any] = []
        self._walk(env, "")

    def _walk(self, node: Any, path: str) -> None:
        self.keep.append(node)
        if isinstance(node, list):
            self.containers[id(node)] = path
            for x in node:
                if not isinstance(x, SCALARS):
                    self.records[id(x)] = path
                    self.keep.append(x)
            return
        fields = _fields(node)
        if fields is None:
            return
        if path and isinstance(node, dict) and _is_record_map(node):
            self.containers[id(node)] = path
            for x in node.values():
                self.records[id(x)] = path
            return
        scalars = {str(k) for k, v in fields.items() if not isinstance(v, (dict, list)) and _fields(v) is None}
        if scalars and path:
            self.holders[id(node)] = (path, scalars)
        for k, v in fields.items():
            if isinstance(v, (dict, list)) or _fields(v) is not None:
                self._walk(v, f"{path}.{k}" if path else str(k))

    def of(self, value: Any) -> str | None:
        return self.containers.get(id(value)) or self.records.get(id(value))


class Tracer:
    """sys.settrace: which collections of `places` the code run under it reaches, and on which lines."""

    def __init__(self, places: Places) -> None:
        self.places = places
        self.seen: dict[str, list[str]] = {}
        self._parsed: dict[tuple[str, int], list[ast.expr]] = {}

    def _note(self, collection: str, where: str) -> None:
        lines = self.seen.setdefault(collection, [])
        if len(lines) < 3 and where not in lines:
            lines.append(where)

    def __call__(self, frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename == __file__:
            return None
        return self._local

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        where = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
        if event == "return":
            c = self.places.of(arg)
            if c is not None:
                self._note(c, f"{where} returns a part of it")
        if event != "line":
            return self._local
        for name, value in list(frame.f_locals.items()):
            c = self.places.of(value)
            if c is not None and name != "self":
                self._note(c, f"{where} local `{name}`")
        for node in self._chains(frame.f_code.co_filename, frame.f_lineno):
            self._evaluate(node, frame, where)
        return self._local

    def _chains(self, filename: str, lineno: int) -> list[ast.expr]:
        key = (filename, lineno)
        if key not in self._parsed:
            self._parsed[key] = _chains(linecache.getline(filename, lineno))
        return self._parsed[key]

    def _evaluate(self, node: ast.expr, frame: Any, where: str) -> None:
        try:
            value = eval(compile(ast.Expression(node), "<chain>", "eval"), frame.f_globals, frame.f_locals)
        except Exception:  # noqa: BLE001  (a name this line has not bound yet, a key that is not there)
            return
        text = ast.unparse(node)
        c = self.places.of(value)
        if c is not None:
            self._note(c, f"{where} `{text}`")
            return
        if isinstance(value, SCALARS) and isinstance(node, (ast.Attribute, ast.Subscript)):
            try:
                parent = eval(compile(ast.Expression(node.value), "<chain>", "eval"), frame.f_globals, frame.f_locals)
            except Exception:  # noqa: BLE001
                return
            held = self.places.holders.get(id(parent))
            field = node.attr if isinstance(node, ast.Attribute) else None
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                field = str(node.slice.value)
            if held is not None and field in held[1]:
                self._note(held[0], f"{where} `{text}`")


def _chains(line: str) -> list[ast.expr]:
    """The maximal attribute/subscript chains of one source line (none holding a call), as expressions."""
    text = line.strip()
    if not text or text.startswith(("#", "def ", "class ", "@")):
        return []
    for prefix in ("elif ", "else"):
        if text.startswith(prefix):
            text = "if " + text[len(prefix) :] if prefix == "elif " else ""
    candidates = [text, text + " pass", text.rstrip(":") + ": pass", "(" + text.rstrip(",") + ")"]
    tree = None
    for c in candidates:
        try:
            tree = ast.parse(c)
            break
        except SyntaxError:
            continue
    if tree is None:
        return []
    inner: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Attribute, ast.Subscript)):
            inner.add(id(n.value))
    out = []
    for n in ast.walk(tree):
        chain = isinstance(n, (ast.Attribute, ast.Subscript)) and id(n) not in inner
        if chain and not any(isinstance(m, (ast.Call, ast.NamedExpr, ast.Lambda)) for m in ast.walk(n)):
            out.append(n)
    return out


def replay(version: str, cell: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime
    from agentdojo.task_suite.load_suites import get_suite

    suite_name, _, tid = cell["task"].partition("/")
    suite = get_suite(version, suite_name)
    task = suite.user_tasks.get(tid) or suite.injection_tasks[tid]
    env = suite.load_and_inject_default_environment({})
    if tid in suite.user_tasks:
        env = task.init_environment(env)
    start = env.model_copy(deep=True)
    runtime = FunctionsRuntime(suite.tools)
    for action in run["actions"]:
        runtime.run_function(env, action["name"], dict(action.get("args") or {}), raise_on_error=False)
    traces = [FunctionCall(function=a["name"], args=dict(a.get("args") or {})) for a in run["actions"]]
    by_traces, check = (
        ("utility_from_traces", "utility") if tid in suite.user_tasks else ("security_from_traces", "security")
    )
    tracer = Tracer(Places(env))
    sys.settrace(tracer)
    try:
        said = getattr(task, by_traces)(run.get("answer", ""), start, env, traces)
        graded = by_traces
        if said is None:
            said, graded = getattr(task, check)(run.get("answer", ""), start, env), check
    finally:
        sys.settrace(None)
    return {"verdict": bool(said), "graded_by": graded, "seen": tracer.seen}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audit", type=Path)
    p.add_argument("changed", type=Path)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--sample", type=int, default=20)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    manifest = json.loads((args.audit / "manifest.json").read_text())
    rows = {
        r["cell_id"]: r
        for r in (json.loads(line) for line in (args.audit / "cells.jsonl").read_text().splitlines() if line.strip())
    }
    cells = {c["cell_id"]: c for c in manifest["cells"]}
    version = manifest.get("version") or "v1.2"
    changed = json.loads(args.changed.read_text())["changed"]
    ids = sorted(c["cell_id"] for c in changed)
    drawn = sorted(random.Random(args.seed).sample(ids, min(args.sample, len(ids))))
    by_id = {c["cell_id"]: c for c in changed}
    out = []
    for cid in drawn:
        row, cell = rows[cid], cells[cid]
        got = replay(version, cell, cell["run"])
        claims = []
        for coll, said in by_id[cid]["collections"].items():
            name = coll.removesuffix(NEW)
            traced = "read" if name in got["seen"] else "never"
            claims.append(
                {
                    "collection": coll,
                    "source_text": said["source_text"],
                    "measured": said["measured"],
                    "settrace": traced,
                    "lines": got["seen"].get(name, []),
                }
            )
        out.append(
            {
                "cell_id": cid,
                "reason": row["reason"],
                "verdict_recorded": row["verdict"],
                "verdict_now": got["verdict"],
                "graded_by": got["graded_by"],
                "claims": claims,
                "agree": all(c["measured"] == c["settrace"] for c in claims) and got["verdict"] == row["verdict"],
                "settrace_read": sorted(got["seen"]),
            }
        )
    result = {"audit": str(args.audit), "seed": args.seed, "changed": len(ids), "sampled": out}
    target = args.out or args.audit / "read-sets-precision.json"
    target.write_text(json.dumps(result, indent=1) + "\n")
    agree = sum(o["agree"] for o in out)
    print(f"{len(out)} changed reasons replayed under sys.settrace: the measurement agrees on {agree}; {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
