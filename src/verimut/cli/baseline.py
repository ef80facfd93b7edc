"""`verimut baseline DIR > verimut-baseline.json`: an audit's findings as a baseline, and `--baseline FILE` read.

The file is the benchmark repository's to commit (findings/baseline.py says what it holds and how it is matched);
`audit`, `swap`, `report` and `repair` read it with `--baseline`, before any work, so a bad file costs nothing.
"""

from __future__ import annotations

import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from verimut.cli.terminal import err
from verimut.core.errors import AuditError
from verimut.engine.store import Store, encode_json
from verimut.findings import baseline as baseline_mod
from verimut.findings.baseline import Baseline, Match


@dataclass(frozen=True)
class Given:
    """A baseline file as read, and its path as the user gave it (messages name it)."""

    baseline: Baseline
    source: str

    def check(self, benchmark: str, arm: str) -> Given:
        baseline_mod.check(self.baseline, benchmark, arm, self.source)
        return self

    def lines(self, found: Match) -> list[str]:
        return baseline_mod.lines(found, self.source)


# A baseline names findings: a file of more is not one (and /dev/zero would fill memory).
MOST_BYTES = 256 * 1024 * 1024


def load(path: Path) -> Given:
    """The baseline at `path`, or an AuditError in one line (missing, unreadable, not a regular file, too large,
    not a baseline)."""
    try:
        kind = path.stat().st_mode
        if stat.S_ISDIR(kind):
            raise AuditError(f"--baseline {path} is a directory, not a baseline file")
        if not stat.S_ISREG(kind):  # a FIFO would block forever, a device never end
            raise AuditError(f"--baseline {path} is not a regular file (a pipe or a device): give a baseline file")
        with path.open("rb") as f:
            data = f.read(MOST_BYTES + 1)
    except FileNotFoundError:
        raise AuditError(f"--baseline {path}: no such file") from None
    except OSError as e:
        raise AuditError(f"--baseline {path}: {e.strerror or e}") from None
    if len(data) > MOST_BYTES:
        raise AuditError(f"--baseline {path} is larger than {MOST_BYTES // 2**20} MiB: not a baseline file")
    return Given(baseline_mod.decode(data, str(path)), str(path))


def load_optional(path: Path | None) -> Given | None:
    return None if path is None else load(path)


def baseline(
    directory: Annotated[Path, typer.Argument(help="An audit's (or a swap census's) --out directory.")],
    keep: Annotated[
        Path | None,
        typer.Option(
            "--keep",
            help="An existing baseline: write only its entries that still occur, with their reasons "
            "(the file shrinks; findings it does not hold are not added).",
        ),
    ] = None,
    reason: Annotated[str, typer.Option(help="The reason to write in every entry (default: empty, to fill in).")] = "",
) -> None:
    """Print a baseline of the audit's findings (confirmed false accepts, false rejects, vacuous verifiers) as JSON."""
    given = load_optional(keep)  # a bad file first, before the audit is read
    m, rows = Store(directory).finished()
    if given is None:
        b = baseline_mod.build(m, rows, reason)
    else:
        given.check(m.benchmark, m.arm)
        found = baseline_mod.match(given.baseline, m, rows)
        for line in given.lines(found):
            err.print(line, highlight=False, markup=False, soft_wrap=True)
        b = baseline_mod.shrink(given.baseline, m, found)
    try:
        sys.stdout.buffer.write(encode_json(b) + b"\n")
        sys.stdout.buffer.flush()
    except OSError as e:  # a full disk behind `> file`: one line, not a traceback (the audit is only read)
        raise AuditError(f"cannot write the baseline to standard output: {e.strerror or e}") from None
    sys.stdout.flush()
    err.print(f"{len(b.findings)} finding(s) of {m.benchmark} {m.version}", highlight=False)
    raise typer.Exit(0)
