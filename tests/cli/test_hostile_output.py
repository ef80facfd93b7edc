"""Hostile text and hostile output directories, through the real command line (issue 27, items 9, 10, 13, 15).

- The benchmark's task ids, instructions and verifier messages carry terminal escapes (tests/escbench.py):
  no command prints them raw, and no file verimut writes for people holds them raw.
- A symbolic link where verimut writes in --out is refused in one line, and its target is left alone.
- A full disk, or a ledger on a read-only file system, stops the run with one line; nothing recorded is
  lost, and a rerun once there is room resumes to the full result.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from rich.console import Console

from conftest import ROOT, verimut
from escbench import C1, EVIL, LINK, TASK
from verimut.core.errors import AuditError
from verimut.core.records import CellResult, Evidence, Outcome, RunRecord
from verimut.engine import store
from verimut.engine.store import Store
from verimut.outputs.cell_view import Terminal, inert

ESC = "tests.escbench:benchmark"
# What a terminal acts on rather than shows (as cell_view._ACTIVE): C0 but tab and newline, DEL, C1, bidi.
ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# rich's own control when it believes it drives a terminal: SGR colour, cursor moves (CSI), carriage returns.
RICH_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
PLAIN = {"COLUMNS": "100"}
TERMINAL = {"COLUMNS": "100", "FORCE_COLOR": "1", "TTY_COMPATIBLE": "1"}
FULL = "nothing recorded is lost; free space and run again to resume"


def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line with extra environment (verimut() in conftest takes none)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR", "COLUMNS")}
    return subprocess.run(
        [sys.executable, "-m", "verimut.cli", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**clean, **(env or {})},
    )


def hashes(directory: Path) -> dict[str, str]:
    return {
        p.relative_to(directory).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def outcomes(out: Path) -> dict[str, str]:
    rows = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    found = {r["cell_id"]: r["outcome"] for r in rows}
    assert len(found) == len(rows), "a cell recorded twice"
    return found


@pytest.fixture(scope="module")
def esc_audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An audit of the escape benchmark, then its repair; tests copy it before they write."""
    out = tmp_path_factory.mktemp("esc") / "out"
    done = verimut("audit", ESC, "-q", "--executor", "inprocess", "--out", str(out))
    assert done.returncode == 1, done.stderr  # the duplicate add is a confirmed false accept
    repaired = verimut("repair", str(out), "--benchmark", ESC)
    assert repaired.returncode == 0, repaired.stderr
    return out


# ---- 10: terminal escapes -------------------------------------------------------------------------


@pytest.mark.parametrize("env", [PLAIN, TERMINAL], ids=["plain", "terminal"])
def test_no_command_prints_the_benchmarks_control_characters(tmp_path, env):
    out = tmp_path / "esc"
    scores = tmp_path / "scores.csv"
    scores.write_text(f"system,split,score\nsys{EVIL},esc,0.5\nother,esc,0.4\n")
    results = {
        # No --quiet: the progress bar is printed too.
        "audit": run("audit", ESC, "--executor", "inprocess", "--out", out, env=env),
        "report": run("report", out, env=env),
        "ls": run("ls", out, env=env),
        "show": run("show", out, f"{TASK}:extra", env=env),
        "repair": run("repair", out, "--benchmark", ESC, env=env),
        "rank": run("rank", scores, "--audit", out, env=env),
    }
    for name, result in results.items():
        assert result.returncode in (0, 1), (name, result.stderr)
        for stream in (result.stdout, result.stderr):
            # The benchmark's own sequences never pass, forced terminal or not.
            assert "pwned\x07" not in stream and "\x1b]0;" not in stream and C1 not in stream, (name, stream)
            assert "\x1b]8;" not in stream, (name, stream)  # no hyperlink, neither raw nor rich's from markup
            shown = RICH_CONTROL.sub("", stream) if env is TERMINAL else stream
            assert not ACTIVE.search(shown), (name, stream)
    shown_as_text = inert(EVIL)  # what a person sees instead: the escapes spelled out
    for name in ("audit", "ls", "show", "rank"):
        assert shown_as_text in results[name].stdout, (name, results[name].stdout)
    assert "[/]" in results["audit"].stdout  # a stray markup tag in a task id is shown, not raised on
    if env is TERMINAL:
        assert "\x1b[" in results["audit"].stdout  # rich did style its output: the forced path was taken


def test_the_files_for_people_hold_no_raw_control_characters(esc_audit):
    for name in ("summary.md", "report.html", "repair/summary.md", "repair/repaired_verifiers.py"):
        text = (esc_audit / name).read_text()
        assert not ACTIVE.search(text), (name, ACTIVE.search(text))
        assert "pwned" in text  # the text is there, inert
    for name in ("summary.json", "repair/summary.json", "manifest.json", "cells.jsonl"):
        raw = (esc_audit / name).read_bytes()
        assert b"\x1b" not in raw and b"\x07" not in raw, name  # JSON escapes them itself
    assert "\\x1b]0;pwned\\x07" in (esc_audit / "summary.md").read_text()


def test_the_terminal_drops_a_planted_link_and_shows_a_stray_tag():
    console = Terminal(force_terminal=True, color_system="truecolor", width=80)
    with console.capture() as captured:
        console.print(f"[bold]verimut's own markup[/] {LINK} {EVIL}")
        console.print("a task id [/] with a stray closing tag")
    text = captured.get()
    assert "\x1b]8;" not in text and "\x1b]0;" not in text and "\u202e" not in text
    assert "\x1b[1m" in text  # verimut's own styling is kept
    assert "a task id [/] with a stray closing tag" in RICH_CONTROL.sub("", text)
    plain = Console(force_terminal=True, color_system="truecolor", width=80)
    with plain.capture() as captured:
        plain.print(LINK)
    assert "\x1b]8;" in captured.get()  # what a plain Console would have written


# ---- 9: symbolic links in --out -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "dangling", "command"),
    [
        ("cells.jsonl", False, "audit"),  # the target lacks rows, so an audit would append them there
        ("runs.jsonl", True, "audit"),  # a dangling link would create the file outside
        ("manifest.json", False, "audit"),
        ("summary.md", False, "report"),
        ("report.html", True, "report"),
        ("repair", False, "repair"),  # a folder on the way
    ],
)
def test_a_symbolic_link_in_the_output_directory_is_refused_and_its_target_untouched(
    esc_audit, tmp_path, name, dangling, command
):
    out = tmp_path / "out"
    shutil.copytree(esc_audit, out)
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / name
    if name == "repair":
        target.mkdir()
    elif name == "cells.jsonl":
        target.write_text("".join((out / name).read_text().splitlines(keepends=True)[:-3]))
    elif not dangling:
        shutil.copy(out / name, target)
    if (out / name).is_dir():
        shutil.rmtree(out / name)
    else:
        (out / name).unlink()
    (out / name).symlink_to(target)
    before = hashes(outside), sorted(outside.rglob("*"))
    args = {
        "audit": ["audit", ESC, "-q", "--executor", "inprocess", "--out", str(out)],
        "report": ["report", str(out)],
        "repair": ["repair", str(out), "--benchmark", ESC],
    }[command]
    result = verimut(*args)
    assert result.returncode == 2, result.stderr
    assert f"{out / name} is a symbolic link; verimut writes only regular files it owns in --out" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert (hashes(outside), sorted(outside.rglob("*"))) == before  # the target unchanged, nothing created
    assert (out / name).is_symlink()


def _row(cell_id: str) -> CellResult:
    return CellResult(cell_id, "b", "t", "extra", "-", Outcome.REJECTED, False, Evidence(edit="e"))


@pytest.mark.parametrize(
    "name",
    [
        store.MANIFEST,
        store.LEDGER,
        store.TORN,
        store.RUNS,
        store.SUMMARY_JSON,
        store.SUMMARY_MD,
        store.REWARDS,
        store.REPORT,
        store.REPAIR,
        f"{store.REPAIR}/{store.SUMMARY_MD}",
    ],
)
def test_every_file_the_store_writes_refuses_a_link_when_the_lock_is_taken(tmp_path, name):
    s = Store(tmp_path / "out")
    (s.directory / name).parent.mkdir(parents=True)
    (s.directory / name).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(AuditError, match="is a symbolic link; verimut writes only regular files it owns"), s.lock():
        pass
    assert not (tmp_path / "elsewhere").exists()


def test_each_write_refuses_a_dangling_link_without_the_lock_check(tmp_path):
    """The open itself does not follow a link (O_NOFOLLOW), as well as the check when the lock is taken."""
    s = Store(tmp_path / "out")
    s.directory.mkdir()
    writes = {
        store.LEDGER: lambda: s.appender().append(_row("t:extra")),
        store.RUNS: lambda: s.append_run(RunRecord("2025-01-01T00:00:00+00:00", 1.0, 1, "fault")),
        store.SUMMARY_MD: lambda: s.write_summary({}, "text"),
        store.REPORT: lambda: s.write_report("<html>"),
        store.MANIFEST: lambda: s.write(store.MANIFEST, b"{}"),
    }
    for name, write in writes.items():
        link = s.directory / name
        link.symlink_to(tmp_path / f"elsewhere-{name}")
        with pytest.raises(AuditError, match=f"{re.escape(str(link))} is a symbolic link"):
            write()
        link.unlink()
    # The torn-row file, written by resume when the ledger ends in a cut row.
    s.ledger_path.write_bytes(b'{"cell_id": "t:ex')
    (s.directory / store.TORN).symlink_to(tmp_path / "elsewhere-torn")
    with pytest.raises(AuditError, match="is a symbolic link"):
        s.resume()
    assert s.ledger_path.read_bytes() == b'{"cell_id": "t:ex'  # not cut either
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# ---- 13: a full disk, a read-only file system -----------------------------------------------------


def test_a_disk_that_fills_mid_row_leaves_whole_rows_and_says_so_in_one_line(tmp_path, monkeypatch):
    s = Store(tmp_path)
    ledger = s.appender()
    ledger.append(_row("t:a"))
    real = os.write
    calls = []

    def full(fd: int, data: bytes) -> int:
        if fd != ledger._fd:
            return real(fd, data)
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, bytes(data[:10]))  # a full disk takes part of a write ...
        raise OSError(errno.ENOSPC, "No space left on device")  # ... and refuses the rest

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(AuditError) as raised:
        ledger.append(_row("t:b"))
    monkeypatch.undo()
    ledger.close()
    assert str(raised.value) == f"cannot write {s.ledger_path}: no space left on device; {FULL}"
    assert s.ledger_path.read_bytes().endswith(b"}\n") and list(s.rows()) == ["t:a"]
    s.appender().append(_row("t:b"))  # once there is room, the next row starts on a line of its own
    assert list(s.rows()) == ["t:a", "t:b"]


def test_a_derived_file_on_a_read_only_file_system_is_one_line(tmp_path, monkeypatch):
    def refused(*_: object, **__: object) -> tuple[int, str]:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    with pytest.raises(AuditError, match=r"summary\.json: the file system is read-only; nothing recorded is lost"):
        Store(tmp_path).write_summary({}, "text")


def _can_mount() -> bool:
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def test_a_full_disk_stops_the_audit_in_one_line_and_a_rerun_with_room_resumes(esc_audit, tmp_path):
    if not _can_mount():
        pytest.skip("unshare -m (a private mount namespace, to mount a small tmpfs) is not permitted on this machine")
    disk = tmp_path / "disk"
    disk.mkdir()
    audit = f"{sys.executable} -m verimut.cli audit {ESC} -q --executor inprocess --out {disk}/out"
    # A 256 KiB tmpfs in a private mount namespace, filled but for one page: the manifest fits, the ledger
    # (about 6 KB for this benchmark) does not. Then the filler goes, and the same audit runs again.
    script = f"""
        mount -t tmpfs -o size=256k tmpfs {disk} || exit 97
        mkdir {disk}/out && cp {esc_audit}/manifest.json {disk}/out/
        dd if=/dev/zero of={disk}/fill bs=4096 2>/dev/null
        truncate -s -4096 {disk}/fill
        {audit} > {tmp_path}/full.out 2> {tmp_path}/full.err; echo $? > {tmp_path}/full.code
        cp {disk}/out/cells.jsonl {tmp_path}/ledger-when-full
        rm {disk}/fill
        {audit} > {tmp_path}/freed.out 2> {tmp_path}/freed.err; echo $? > {tmp_path}/freed.code
        cp -r {disk}/out {tmp_path}/after
    """
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    err = (tmp_path / "full.err").read_text()
    assert (tmp_path / "full.code").read_text().strip() == "2", err
    assert len(err.strip().splitlines()) == 1, err
    assert f"cannot write {disk}/out/cells.jsonl: no space left on device; {FULL}" in err
    when_full = (tmp_path / "ledger-when-full").read_text()
    whole = [json.loads(line) for line in when_full.splitlines()]  # every row whole, none cut
    assert when_full.endswith("\n") and 0 < len(whole) < len(outcomes(esc_audit))
    assert (tmp_path / "freed.code").read_text().strip() == "1", (tmp_path / "freed.err").read_text()
    after = tmp_path / "after"
    assert outcomes(after) == outcomes(esc_audit)  # the full result, each cell once
    summary = json.loads((after / "summary.json").read_text())
    assert summary["scored"] == summary["cells"] == len(outcomes(esc_audit))
    assert not (after / store.TORN).exists()  # no torn row was left to set aside


def test_a_ledger_on_a_read_only_file_system_is_one_line_and_changes_nothing(esc_audit, tmp_path):
    if not _can_mount():
        pytest.skip("unshare -m (a private mount namespace, to mount the ledger read-only) is not permitted here")
    out = tmp_path / "out"
    shutil.copytree(esc_audit, out)
    ledger = out / store.LEDGER
    ledger.write_text("".join(ledger.read_text().splitlines(keepends=True)[:-3]))  # three cells left to score
    before = hashes(out)
    script = (
        f"mount --bind {ledger} {ledger} && mount -o remount,bind,ro {ledger} && "
        f"{sys.executable} -m verimut.cli audit {ESC} -q --executor inprocess --out {out}"
    )
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert f"cannot write {ledger}: the file system is read-only; nothing recorded is lost" in result.stderr
    assert hashes(out) == before
    resumed = verimut("audit", ESC, "-q", "--executor", "inprocess", "--out", str(out))
    assert resumed.returncode == 1, resumed.stderr
    assert outcomes(out) == outcomes(esc_audit)
