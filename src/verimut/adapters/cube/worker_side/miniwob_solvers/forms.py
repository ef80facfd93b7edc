"""Solvers for MiniWoB++ forms tasks (none yet)."""

from __future__ import annotations

from ._act import Solver

SOLVERS: dict[str, Solver] = {}
STATES: dict[str, str] = {}
