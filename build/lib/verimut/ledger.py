"""The ledger: `cells.jsonl`, one JSON object per scored cell, appended as each finishes.

One writer appends whole lines with a single write and fsyncs each, so a run killed at
any moment leaves at most one torn line, at the very end. Reading the ledger drops a torn
tail (keeping its bytes in `cells.jsonl.torn`, so nothing is silently lost) and refuses a
corrupt line anywhere else.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from verimut.errors import AuditError

LEDGER = "cells.jsonl"


class CellResult(msgspec.Struct, frozen=True):
    cell_id: str
    benchmark: str
    task: str
    family: str
    variant: str
    outcome: str
    verdict: bool | None
    evidence: dict[str, Any]
    reason: str | None = None
    unscorable: bool = False
    seconds: float = 0.0


_decoder = msgspec.json.Decoder(CellResult)
_encoder = msgspec.json.Encoder()


class Ledger:
    def __init__(self, out: Path) -> None:
        self.path = out / LEDGER
        self._fd: int | None = None

    def read(self) -> dict[str, CellResult]:
        """Every recorded cell by id. Repairs a torn last line; refuses any other bad line."""
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        rows: dict[str, CellResult] = {}
        lines = data.split(b"\n")
        tail = lines.pop()  # after the last newline: empty unless a write was torn
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = _decoder.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError) as e:
                raise AuditError(f"{self.path}: line {n} is not a cell record ({e}); fix or remove that line") from None
            rows[row.cell_id] = row
        if tail.strip():
            with open(self.path.with_suffix(".jsonl.torn"), "ab") as keep:
                keep.write(tail + b"\n")
            with open(self.path, "r+b") as f:
                f.truncate(len(data) - len(tail))
        return rows

    def append(self, row: CellResult) -> None:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self._fd, _encoder.encode(row) + b"\n")
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# --- when each invocation ran ------------------------------------------------------------------
# `runs.jsonl`: one line per `audit`/`swap` invocation on a directory (a resumed run adds one), so a
# report can say when the work was done and how long it took on the wall clock, which the ledger's
# per-cell `seconds` (scoring time, summed over workers) does not say.

RUNS = "runs.jsonl"


class RunRecord(msgspec.Struct, frozen=True):
    started: str  # ISO 8601, UTC
    wall_seconds: float
    scored: int  # cells scored by this invocation (0 when it only resumed a finished run)
    arm: str


def append_run(out: Path, record: RunRecord) -> None:
    with open(out / RUNS, "ab") as f:
        f.write(_encoder.encode(record) + b"\n")


def read_runs(out: Path) -> list[RunRecord]:
    """Every recorded invocation; a line that does not parse (a torn write) is skipped, it only informs."""
    path = out / RUNS
    if not path.exists():
        return []
    runs = []
    for line in path.read_bytes().splitlines():
        try:
            runs.append(msgspec.json.decode(line, type=RunRecord))
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
    return runs
