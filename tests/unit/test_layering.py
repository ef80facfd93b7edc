"""Layering: packages import only packages below them, no import cycle, one owner of the output directory's files,
and that owner's round trip (pure)."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import msgspec
import pytest
from bench import import_layers
from hypothesis import given
from hypothesis import strategies as st

from verimut import __version__
from verimut.core.errors import AuditError
from verimut.core.records import CellResult, Difference, Evidence, Manifest, Outcome, RunRecord, content_hash
from verimut.engine import store
from verimut.engine.store import Store
from verimut.outputs import reproduce

SRC = Path(store.__file__).parent.parent
# The pipeline's stages, bottom to top (docs/layout.md): a module imports from its own package or one before it.
# verimut/__init__.py (the package's face) and the deprecated old paths re-export, so they sit above them all.
DEPRECATED = ("benchmark", "run", "errors")  # old paths kept for one release, with a warning
LAYERS = ("oracle", "core", "grammar", "adapters", "engine", "executors", "findings", "repair", "outputs", "api", "cli")
NAMES = (store.MANIFEST, store.LEDGER, store.RUNS, store.SUMMARY_JSON, store.REWARDS)
# reproduce.py runs standalone from an archive (standard library only), so it keeps its own names.
OWNERS = {"store", "reproduce"}


class Module(msgspec.Struct, frozen=True):
    tree: ast.Module
    package: str  # what a relative import is relative to


def _modules() -> dict[str, Module]:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = ("verimut", *path.relative_to(SRC).with_suffix("").parts)
        is_init = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_init else parts)
        package = name if is_init else name.rpartition(".")[0]
        found[name] = Module(ast.parse(path.read_text(), str(path)), package)
    return found


def _graph() -> dict[str, set[str]]:
    """Each verimut module's imports of verimut modules, at any depth: bench/import_layers.py reads them (the
    figures in docs/development.md come from the same reader)."""
    paths = import_layers.modules(SRC)
    return {name: import_layers.imports(name, path, set(paths)) for name, path in paths.items()}


def test_the_import_graph_has_no_cycle():
    graph = _graph()
    assert (
        "verimut.engine.store" in graph["verimut.cli.report"]
        and "verimut.grammar.pairs" in graph["verimut.engine.arms"]
    )
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def _layer(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


def test_every_module_sits_in_a_stage_and_imports_only_stages_below_its_own():
    graph = _graph()
    modules = graph
    faces = {"verimut", *(f"verimut.{old}" for old in DEPRECATED)}  # the face and the old paths re-export
    stray = [name for name in modules if name not in faces and _layer(name) not in LAYERS]
    assert not stray, "modules outside every stage's package: " + ", ".join(stray)
    upward = []
    for name in modules:
        if name in faces:
            continue
        for target in graph[name]:
            if target not in faces and LAYERS.index(_layer(target)) > LAYERS.index(_layer(name)):
                upward.append(f"{name} ({_layer(name)}) imports {target} ({_layer(target)})")
            if target in faces:
                upward.append(f"{name} imports {target}, the package's face: import the module itself")
    assert not upward, "imports against the stages' order:\n" + "\n".join(sorted(upward))


def test_only_the_command_line_and_the_outputs_import_terminal_libraries():
    ui = ("rich", "typer", "click")
    found = []
    for name, module in _modules().items():
        if _layer(name) in ("cli", "outputs"):
            continue
        for node in ast.walk(module.tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            found += [f"{name} imports {n}" for n in names if n.split(".")[0] in ui]
    assert not found, "; ".join(found)


def test_the_order_is_the_one_the_layout_page_gives():
    layout = (SRC.parent.parent / "docs" / "layout.md").read_text()
    overview = layout.split("```")[1]  # the first block: one line per package
    listed = [line.split("/")[0].strip() for line in overview.splitlines() if line.startswith("  ") and "/ " in line]
    assert tuple(p for p in listed if p in LAYERS) == tuple(p for p in LAYERS if p != "api")


def _docstrings(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def test_only_the_store_names_the_output_files():
    offenders = []
    for name, module in _modules().items():
        if name.rpartition(".")[2] in OWNERS:
            continue
        tree = module.tree
        prose = _docstrings(tree)  # documentation may name a file; code may not
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
                offenders += [f"{name}:{node.lineno} {f}" for f in NAMES if f in node.value]
    assert not offenders, "output file names outside store.py: " + ", ".join(offenders)


def test_the_reproducer_names_the_same_files_as_the_store():
    assert (reproduce.MANIFEST, reproduce.LEDGER, reproduce.SUMMARY) == (
        store.MANIFEST,
        store.LEDGER,
        store.SUMMARY_JSON,
    )


# ---- the store's round trip -------------------------------------------------------------------


def _manifest() -> Manifest:
    m = Manifest(__version__, "bench", "1", {}, ["extra"], [], [], {}, [])
    return msgspec.structs.replace(m, content_hash=content_hash(m))


def _row(n: int, outcome: Outcome = Outcome.REJECTED) -> CellResult:
    return CellResult(f"t/{n}:extra", "bench", f"t/{n}", "extra", "-", outcome, False, Evidence(edit="repeated"))


def test_a_manifest_and_rows_read_back_as_written(tmp_path):
    s = Store(tmp_path / "out")
    s.write_manifest(_manifest())
    assert s.read_manifest() == _manifest()
    ledger = s.appender()
    try:
        for n in range(3):
            ledger.append(_row(n))
    finally:
        ledger.close()
    assert list(s.rows()) == [f"t/{n}:extra" for n in range(3)]
    assert s.rows()["t/0:extra"].outcome is Outcome.REJECTED
    s.append_run(RunRecord("2026-01-02T03:04:05+00:00", 1.5, 3, "fault"))
    assert s.runs() == [RunRecord("2026-01-02T03:04:05+00:00", 1.5, 3, "fault")]


def test_a_modified_manifest_is_refused(tmp_path):
    s = Store(tmp_path)
    s.write_manifest(_manifest())
    path = s.path(store.MANIFEST)
    path.write_text(path.read_text().replace('"bench"', '"other"', 1))
    with pytest.raises(AuditError, match="modified after it was written"):
        s.read_manifest()
    with pytest.raises(AuditError, match="has no manifest.json"):
        Store(tmp_path / "empty").read_manifest()


def test_only_the_resume_path_repairs_a_torn_tail(tmp_path):
    s = Store(tmp_path)
    ledger = s.appender()
    ledger.append(_row(0))
    ledger.close()
    torn = b'{"cell_id":"t/1:ext'
    with open(s.ledger_path, "ab") as f:
        f.write(torn)
    before = s.ledger_path.read_bytes()
    assert list(s.rows()) == ["t/0:extra"]  # a reader skips the torn line ...
    assert s.ledger_path.read_bytes() == before  # ... and changes nothing
    assert not s.path(store.TORN).exists()
    assert list(s.resume()) == ["t/0:extra"]  # the path about to append moves it aside
    assert s.path(store.TORN).read_bytes() == torn + b"\n"
    assert s.ledger_path.read_bytes() == before[: -len(torn)]


def test_a_bad_line_before_the_end_is_refused_by_every_path(tmp_path):
    s = Store(tmp_path)
    s.ledger_path.write_bytes(b"not json\n" + msgspec.json.encode(_row(0)) + b"\n")
    for read in (s.rows, s.resume):
        with pytest.raises(AuditError, match="line 1 is not a cell record"):
            read()


def test_an_atomic_write_that_fails_leaves_no_temp_file(tmp_path, monkeypatch):
    s = Store(tmp_path)
    s.write(store.REPORT, "old")

    def fail(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        s.write(store.REPORT, "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == [store.REPORT]
    assert s.path(store.REPORT).read_text() == "old"


# ---- typed evidence: lossless through the ledger's JSON ------------------------------------------

_text = st.text(max_size=12)
_record = st.dictionaries(_text, st.one_of(st.integers(), _text, st.booleans(), st.none()), max_size=3)
_difference = st.builds(
    Difference,
    counts=_text,
    collection=_text,
    added=st.lists(_record, max_size=2),
    removed=st.lists(_record, max_size=2),
    reordered=st.booleans(),
)
_maybe = st.none
_evidence = st.builds(
    Evidence,
    edit=_text,
    detail=st.dictionaries(_text, _text, max_size=2),
    run_task=_maybe() | _text,
    rung=_maybe() | _text,
    differs_from_reference=_maybe() | st.lists(_difference, max_size=2),
    changed_from_start=_maybe() | st.dictionaries(_text, _text, max_size=2),
    effect_missing=_maybe() | st.lists(_text, max_size=2),
    effect_free_text_differs=_maybe() | st.lists(_text, max_size=2),
    error=_maybe() | _text,
    executor=_maybe() | _text,
    traceback=_maybe() | _text,
    verifier=_maybe() | _text,
    checks=_maybe() | st.dictionaries(_text, st.booleans(), max_size=2),
)


@given(
    evidence=_evidence,
    outcome=st.sampled_from(Outcome),
    verdict=st.none() | st.booleans(),
    reason=st.none() | _text,
)
def test_a_cell_result_encodes_and_decodes_losslessly(evidence, outcome, verdict, reason):
    row = CellResult("t:extra", "b", "t", "extra", "-", outcome, verdict, evidence, reason)
    data = msgspec.json.encode(row)
    assert msgspec.json.decode(data, type=CellResult) == row
    plain = msgspec.json.decode(data)
    assert plain["outcome"] == outcome.value  # the ledger stores the outcome's name, as before
    # A field is written exactly when it was recorded: None is "not recorded", an empty list is written.
    written = set(plain["evidence"])
    recorded = {f for f in Evidence.__struct_fields__ if getattr(evidence, f) is not None}
    assert written == recorded - ({"detail"} if not evidence.detail else set())
