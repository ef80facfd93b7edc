"""Plug-ins that misbehave (tests/misbehave.py), audited through the real command line (issue 27).

What a user must see for each: a cell error that names the mistake, or a one-line error and exit 2; never a
finding that is not there, an exit 0 for an audit that audited nothing, or a directory nothing can read.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from conftest import verimut

PLUGIN = "tests.misbehave:"


def audit(tmp_path: Path, plugin: str, *extra: str, name: str | None = None):
    out = tmp_path / (name or plugin)
    return out, verimut("audit", PLUGIN + plugin, "-q", "--out", str(out), *extra)


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def ledger(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize(
    ("plugin", "executor", "named"),
    [("says_no", "inprocess", "str ('no')"), ("says_no", "pool", "str ('no')"), ("says_none", "pool", "NoneType")],
)
def test_a_verdict_of_no_is_an_error_never_a_pass(tmp_path, plugin, executor, named):
    out, done = audit(tmp_path, plugin, "--executor", executor)
    assert done.returncode == 0, done.stderr  # 0.4.0: "no": 12 false accepts ("no" is truthy); None: a traceback
    assert summary(out)["false_accepts"] == []
    errors = [r for r in ledger(out) if r["outcome"] == "error"]
    assert errors and all(f"Verdict.passed is {named}" in r["reason"] for r in errors)
    assert all(r["verdict"] is None for r in errors)  # never written as a verdict
    for command in (["ls", str(out)], ["report", str(out)]):  # 0.4.0: "line 1 is not a cell record"
        assert verimut(*command).returncode == 0


@pytest.mark.parametrize(("plugin", "named"), [("says_one", "int (1)"), ("returns_string", "returned str")])
def test_a_verdict_of_another_type_is_named_and_the_directory_stays_readable(tmp_path, plugin, named):
    out, done = audit(tmp_path, plugin)
    # Every control errs, so nothing was audited: exit 2 (0.4.0: an unreadable manifest, or a traceback).
    assert done.returncode == 2
    assert "nothing was audited: all 2 controls failed" in one_line(done.stderr) and named in done.stderr
    assert verimut("ls", str(out)).returncode == 0


def test_a_numpy_bool_is_the_bool_it_is(tmp_path):
    out, done = audit(tmp_path, "numpy_bool")
    plain, same = audit(tmp_path, "plain_bool")
    assert done.returncode == same.returncode, done.stderr  # 0.4.0: an internal error
    assert summary(out)["counts"] == summary(plain)["counts"]


@pytest.mark.parametrize("executor", ["inprocess", "pool"])
def test_sys_exit_in_a_verifier_is_that_cells_error(tmp_path, executor):
    out, done = audit(tmp_path, "exits", "--executor", executor)
    assert done.returncode == 1, done.stderr  # 0.4.0 in process: exit 3, nothing written
    exited = [r for r in ledger(out) if r["outcome"] == "error"]
    assert exited and all("called sys.exit(3)" in r["reason"] for r in exited)
    assert summary(out)["false_accepts"]  # the audit went on past them


def test_sys_exit_while_the_manifest_grades_the_clean_start_does_not_end_the_audit(tmp_path):
    out, done = audit(tmp_path, "exits_on_clean_start", "--executor", "inprocess")
    assert done.returncode == 1, done.stderr  # 0.4.0: exit 0, no output, an empty --out
    assert summary(out)["cells"] == len(ledger(out)) > 0


def test_an_audit_whose_controls_all_fail_exits_2_naming_them(tmp_path):
    out, done = audit(tmp_path, "all_fail")
    assert done.returncode == 2  # 0.4.0: 0, "no false accept"
    line = one_line(done.stderr)
    assert "nothing was audited: all 2 controls failed" in line and "todo/add_milk:control" in line
    assert (out / "summary.md").exists() and (out / "report.html").exists()  # the report says why, too
    gated = verimut("report", str(out), "--fail-on", "control_fail>0")
    assert gated.returncode in (1, 2)


def test_an_execute_that_consumes_its_arguments_leaves_the_planned_runs_recorded(tmp_path):
    out, done = audit(tmp_path, "mutates")
    assert done.returncode == 1, done.stderr  # 0.4.0: a KeyError (the manifest recorded args popped empty)
    manifest = json.loads((out / "manifest.json").read_text())
    for task, facts in manifest["tasks"].items():
        [add] = [a for a in facts["reference"]["actions"] if a["name"] == "add_item"]
        assert add["args"] == {"text": "buy milk" if task == "todo/add_milk" else "call mum"}
    reference = verimut("audit", "examples.todo_bench:benchmark", "-q", "--out", str(tmp_path / "todo"))
    assert summary(out)["counts"] == summary(tmp_path / "todo")["counts"], reference.stderr


def test_a_snapshot_that_differs_on_every_call_can_be_resumed(tmp_path):
    out, first = audit(tmp_path, "random_snapshot")
    assert first.returncode == 1, first.stderr
    again = verimut("audit", PLUGIN + "random_snapshot", "-q", "--out", str(out))
    assert again.returncode == 1, again.stderr  # 0.4.0: "holds an audit with a different manifest"


def test_a_set_in_a_snapshot_is_read_as_a_sorted_list(tmp_path):
    out, done = audit(tmp_path, "set_snapshot")
    listed, same = audit(tmp_path, "sorted_list")
    assert done.returncode == same.returncode == 1, done.stderr  # 0.4.0: exit 0, its false accepts lost
    assert summary(out)["counts"] == summary(listed)["counts"]


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        ("tuple_keys", "$.items[('water plants', 'x')] has a key of type tuple"),
        ("recursive", "$.items_again.state contains itself"),
        ("an_object", "$.handle is a _thread.lock"),
    ],
)
def test_a_snapshot_that_is_not_plain_data_is_one_line_naming_where(tmp_path, plugin, message):
    _, done = audit(tmp_path, plugin)
    assert done.returncode == 2
    line = one_line(done.stderr)  # 0.4.0: a traceback
    assert "todo's snapshot is not plain data: " + message in line, line


def test_a_large_changing_field_is_capped_in_evidence(tmp_path):
    out, done = audit(tmp_path, "big_field")
    assert done.returncode == 1, done.stderr
    sizes = {name: (out / name).stat().st_size for name in ("cells.jsonl", "summary.json", "report.html")}
    assert all(size < 1_000_000 for size in sizes.values()), sizes  # 0.4.0: 84, 42 and 42 MB
    assert "5,242,880 characters, sha256 " in (out / "cells.jsonl").read_text()


def test_a_plugin_with_a_syntax_error_is_one_line(tmp_path):
    (tmp_path / "broken_plugin.py").write_text("def broken(:\n    pass\n")
    done = verimut("audit", "broken_plugin:benchmark", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert "has a syntax error: invalid syntax" in line and "broken_plugin.py, line 1" in line


def test_duplicate_task_ids_are_refused(tmp_path):
    out, done = audit(tmp_path, "duplicate_tasks")
    assert done.returncode == 2  # 0.4.0: "36 cells, 24 scored"
    assert "lists the task 'todo/add_milk' twice" in one_line(done.stderr)
    assert not (out / "cells.jsonl").exists()


def test_a_ledger_row_the_edited_manifest_no_longer_holds_is_named_by_report(tmp_path):
    from verimut.core.records import content_hash
    from verimut.engine.store import Store

    out = tmp_path / "todo"
    assert verimut("audit", "examples.todo_bench:benchmark", "-q", "--out", str(out)).returncode == 1
    store = Store(out)
    m = store.read_manifest()
    dropped = m.cells[-1].cell_id
    edited = msgspec.structs.replace(m, cells=m.cells[:-1])  # by hand, the hash recomputed to match
    store.write_manifest(msgspec.structs.replace(edited, content_hash=content_hash(edited)))
    done = verimut("report", str(out))
    assert done.returncode in (0, 1), done.stderr
    assert "1 ledger row(s) name cells this manifest does not hold" in done.stdout and dropped in done.stdout


def test_a_task_id_with_a_newline_plants_no_code_in_the_repaired_module(tmp_path):
    import importlib.util

    out, done = audit(tmp_path, "newline_task")
    assert done.returncode == 1, done.stderr
    repaired = verimut("repair", str(out), "--benchmark", PLUGIN + "newline_task")
    assert repaired.returncode in (0, 1), repaired.stderr
    [module] = (out / "repair").glob("*.py")
    spec = importlib.util.spec_from_file_location("repaired_under_test", module)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    assert not hasattr(loaded, "PLANTED")
    assert "todo/add_milk\\nPLANTED" in module.read_text()
