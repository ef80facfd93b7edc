"""The minor bad inputs of issue 43: each is one line on stderr and exit code 2, and loses nothing, instead of a
traceback, a hang or a 9 MB line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, verimut
from verimut.core.records import Outcome
from verimut.findings import baseline as baseline_mod
from verimut.findings.baseline import Entry, Match


@pytest.fixture(scope="module")
def todo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("minor") / "todo"
    done = verimut(
        "audit", "examples.todo_bench:benchmark", "-f", "extra", "-o", str(out), "-q", "--executor", "inprocess"
    )
    assert done.returncode == 1, done.stderr
    return out


def _one_line(r: subprocess.CompletedProcess[str], said: str) -> None:
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("verimut: error: ") and said in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr


def test_a_baseline_that_is_a_fifo_a_device_or_nested_deep_is_one_line(todo: Path, tmp_path: Path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: reading it would block forever
    deep = tmp_path / "deep.json"
    deep.write_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}")  # 0.4: RecursionError
    for path, said in (
        (fifo, "is not a regular file (a pipe or a device)"),
        (Path("/dev/zero"), "is not a regular file (a pipe or a device)"),  # 0.4: MemoryError
        (deep, "is not a verimut baseline: it is nested too deeply to read"),
    ):
        _one_line(verimut("report", str(todo), "--baseline", str(path), timeout=60), said)


def test_a_baseline_to_a_full_disk_is_one_line(todo: Path):
    with open("/dev/full", "wb") as full:
        r = subprocess.run(
            [sys.executable, "-m", "verimut.cli", "baseline", str(todo)],
            cwd=ROOT,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert r.returncode == 2 and r.stderr == (
        "verimut: error: cannot write the baseline to standard output: No space left on device\n"
    ), r.stderr


def _can_mount() -> bool:
    return subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False).returncode == 0


def test_junit_and_sarif_on_a_full_disk_are_one_line_and_leave_no_empty_file(todo: Path, tmp_path: Path):
    if not _can_mount():
        pytest.skip("unshare -m (a private mount namespace, to mount a small tmpfs) is not permitted on this machine")
    disk = tmp_path / "disk"
    disk.mkdir()
    report = f"{sys.executable} -m verimut.cli report {todo}"
    script = f"""
        mount -t tmpfs -o size=64k tmpfs {disk} || exit 97
        dd if=/dev/zero of={disk}/fill bs=4096 2>/dev/null
        {report} --junit {disk}/junit.xml > /dev/null 2> {tmp_path}/junit.err; echo $? > {tmp_path}/junit.code
        {report} --sarif {disk}/out.sarif > /dev/null 2> {tmp_path}/sarif.err; echo $? > {tmp_path}/sarif.code
        ls -A {disk} > {tmp_path}/left
    """
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    for name, file in (("junit", "junit.xml"), ("sarif", "out.sarif")):
        err = (tmp_path / f"{name}.err").read_text()
        assert (tmp_path / f"{name}.code").read_text().strip() == "2", err
        assert (
            err
            == f"verimut: error: cannot write {disk}/{file}: no space left on device; nothing recorded is lost; free space and run again to resume\n"
        )
    assert (tmp_path / "left").read_text().split() == ["fill"]  # 0.4: a 0-byte junit.xml


def test_a_diff_inside_an_audit_directory_is_refused(todo: Path):
    inside = todo / "diffs" / "d"
    _one_line(verimut("diff", str(todo), str(todo), "-o", str(inside)), f"--out {inside} is inside {todo}")
    assert not (todo / "diffs").exists()


def test_stale_baseline_entries_are_named_in_a_line_of_bounded_length():
    stale = [
        Entry(cell_id=f"t/{i}:extra", task=f"t/{i}", family="extra", outcome=Outcome.FALSE_ACCEPT, run_hash="0" * 16)
        for i in range(400_000)
    ]
    lines = baseline_mod.lines(Match({}, [], stale, stale, stale), "b.json")
    assert len(lines) == 4 and all(len(line) < 1000 for line in lines)  # 0.4: one 9 MB line each
    assert lines[1].endswith("t/9:extra and 399990 more (remove them)")
