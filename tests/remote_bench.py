"""verimut's side: the remote to-do benchmark, in another interpreter (here, the same Python)."""

from __future__ import annotations

import sys
from pathlib import Path

from verimut.adapters.remote import Remote


def create(version=None):
    return Remote(sys.executable, "tests.remote_todo:Bench", timeout=3, cwd=Path(__file__).resolve().parent.parent)


def kinds(version=None):
    """The remote benchmark with every optional capability and attribute (tests/remote_kinds.py)."""
    return Remote(sys.executable, "tests.remote_kinds:Bench", timeout=30, cwd=Path(__file__).resolve().parent.parent)
