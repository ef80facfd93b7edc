"""Kill Chromium's browser process in the middle of an audit (issue 43, item 1), as a crash would end it.

`audit_killing_the_browser` runs `verimut audit BENCH --task ...` in the background, waits until the ledger holds
`after` rows, SIGKILLs every Chromium browser process (not its renderers and helpers, `--type=...`) in the audit's
process tree, and returns the audit's exit code and how many browsers it killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from conftest import ROOT


def _tree(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            parents[int(name)] = int((Path("/proc") / name / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return tree - {root}


def browsers_under(root: int) -> list[int]:
    found = []
    for pid in _tree(root):
        try:
            cmd = (Path("/proc") / str(pid) / "cmdline").read_bytes()
        except OSError:
            continue
        if b"chrom" in cmd and b"chromedriver" not in cmd and b"--type=" not in cmd:
            found.append(pid)
    return found


def audit_killing_the_browser(bench: str, tasks: Sequence[str], out: Path, after: int = 8) -> tuple[int, int]:
    args = [a for t in tasks for a in ("--task", t)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "verimut.cli", "audit", bench, *args, "--out", str(out), "-q"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ledger, deadline = out / "cells.jsonl", time.monotonic() + 600
    while (not ledger.exists() or ledger.read_text().count("\n") < after) and time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError("the audit ended before its browser could be killed")
        time.sleep(0.05)
    killed = browsers_under(proc.pid)
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    return proc.wait(timeout=600), len(killed)
