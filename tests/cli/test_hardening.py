"""Hardening, through the real command line: one writer per output directory, bad input that
changes nothing recorded, and read commands that only read."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, verimut, wait_for_rows


def hashes(directory: Path) -> dict[str, str]:
    """Every file under the directory by relative path, with its content's digest."""
    return {
        p.relative_to(directory).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def ledger_ids(out: Path) -> list[str]:
    return [json.loads(line)["cell_id"] for line in (out / "cells.jsonl").read_text().splitlines()]


@pytest.fixture
def banking(banking_audit: Path) -> Path:
    """The session's shared banking audit (tests/conftest.py); every test here copies it before writing."""
    return banking_audit


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "verimut.cli", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_audits_on_one_directory_one_runs_the_other_is_refused(tmp_path):
    out = tmp_path / "both"
    args = ("audit", "agentdojo", "--suite", "workspace", "-q", "--workers", "1", "--out", str(out))
    first, second = _start(*args), _start(*args)
    results = [(p.wait(timeout=600), *p.communicate()) for p in (first, second)]
    codes = sorted(code for code, _, _ in results)
    assert codes == [1, 2], results
    [refused] = [err for code, _, err in results if code == 2]
    assert len(refused.strip().splitlines()) == 1
    assert f"{out} is in use by pid " in refused and "verimut.cli audit agentdojo" in refused
    ids = ledger_ids(out)
    assert len(ids) == len(set(ids)) == json.loads((out / "summary.json").read_text())["cells"]


def test_a_report_while_an_audit_writes_is_refused_and_a_killed_holder_leaves_no_lock(tmp_path):
    out = tmp_path / "held"
    proc = _start("audit", "agentdojo", "--suite", "workspace", "-q", "--workers", "1", "--out", str(out))
    wait_for_rows(out / "cells.jsonl", 0)
    before = hashes(out)
    refused = verimut("report", str(out))
    assert refused.returncode == 2 and f"is in use by pid {proc.pid}" in refused.stderr, refused.stderr
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert {k: v for k, v in hashes(out).items() if k != "cells.jsonl"} == {
        k: v for k, v in before.items() if k != "cells.jsonl"
    }
    resumed = verimut("audit", "agentdojo", "--suite", "workspace", "-q", "--out", str(out))
    assert resumed.returncode == 1, resumed.stderr
    ids = ledger_ids(out)
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_a_bad_procredit_weight_changes_nothing(banking, tmp_path, value):
    out = tmp_path / "copy"
    shutil.copytree(banking, out)
    before = hashes(out)
    result = verimut("report", str(out), "--procredit-c", value)
    assert result.returncode == 2 and "--procredit-c must be a positive number" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert hashes(out) == before


def test_bad_output_directories_are_one_line_errors(banking, tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    for args, message in [
        (["audit", "agentdojo", "--task", "banking/user_task_0", "--out", str(a_file / "out")], "is a file"),
        (["report", str(a_file)], "is a file, not a verimut output directory"),
        (["ls", str(a_file)], "is a file, not a verimut output directory"),
    ]:
        result = verimut(*args)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert a_file.read_text() == "not a directory"


def test_a_read_only_output_directory_is_a_one_line_error(banking, tmp_path):
    mount = tmp_path / "ro"
    shutil.copytree(banking, mount / "banking")
    before = hashes(mount)
    # A read-only file system (root ignores permission bits): a tmpfs copy remounted read-only in a private mount namespace.
    script = (
        f"mount --bind {mount} {mount} && mount -o remount,bind,ro {mount} && "
        f"{sys.executable} -m verimut.cli report {mount / 'banking'}"
    )
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("unshare -m (a private mount namespace) is not permitted on this machine")
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 2, result.stderr
    assert "is read-only" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert hashes(mount) == before


def test_read_commands_do_not_write(banking, tmp_path):
    out = tmp_path / "torn"
    shutil.copytree(banking, out)
    with open(out / "cells.jsonl", "ab") as f:
        f.write(b'{"cell_id": "banking/user_task_0:extra", "bench')  # a torn last line
    before = hashes(out)
    for args in (["ls", str(out)], ["show", str(out), "banking/user_task_0:extra"]):
        result = verimut(*args)
        assert result.returncode == 0, result.stderr
    assert hashes(out) == before


def test_terminal_escapes_in_task_data_are_printed_inert(tmp_path):
    out = tmp_path / "esc"
    done = verimut("audit", "tests.escbench:benchmark", "-q", "--executor", "inprocess", "--out", str(out))
    assert done.returncode == 1, done.stderr  # the duplicate add is a confirmed false accept
    listed = verimut("ls", str(out))
    cell = listed.stdout.split()[0]
    shown = verimut(
        "show", str(out), cell.replace("\\x1b", "\x1b").replace("\\x07", "\x07").replace("\\u202e", "\u202e")
    )
    for result in (listed, shown):
        assert result.returncode == 0, result.stderr
        assert not any(ch in result.stdout for ch in "\x1b\x07\u202e"), result.stdout
        assert "\\x1b]0;pwned\\x07" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tests.badplugins:AClass"], "is a class: name an adapter object (`benchmark = TodoBench()`)"),
        ([":benchmark"], "':benchmark' is not `module:object`"),
        (["tests.badplugins:"], "'tests.badplugins:' is not `module:object`"),
        (["tests.badplugins:no_version"], "cannot be called as a factory with the version"),
        (["tests.badplugins:raises"], "the factory 'tests.badplugins:raises' raised RuntimeError: the plug-in could"),
        (["tests.badplugins:empty", "--task", "todo/add_milk"], "lists no tasks"),
        (["tests.badplugins:empty"], "lists no tasks"),
    ],
)
def test_a_wrong_plugin_is_a_one_line_error(args, message, tmp_path):
    result = verimut("audit", *args, "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
