"""`verimut diff A B`: what changed between two audits of one benchmark (findings/diff.py), and its gate.

Exit codes, as the gate's: 0 the gate does not hold, 1 it holds (by default `opened.finding>0`: the after-audit
has a finding the before-audit did not), 2 bad input (a directory that is not an audit, audits of two benchmarks or
two arms, a --fail-on that does not parse or counts what a diff has not), found before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from verimut.cli import gate as gate_mod
from verimut.cli.terminal import diff_tables, out
from verimut.engine.store import Store, write_diff
from verimut.findings import diff as diff_mod

SHOWN = 20  # findings listed per status in the terminal; diff.md lists them all


def _read(directory: Path) -> diff_mod.Audited:
    return diff_mod.Audited(*Store(directory).finished(), str(directory))


def diff(
    before: Annotated[Path, typer.Argument(help="The earlier audit's --out directory (A).")],
    after: Annotated[Path, typer.Argument(help="The later audit's --out directory (B), of the same benchmark.")],
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Where diff.md and diff.json go (default: verimut-out/diff-A-B)."),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            help="Exit 1 when this holds (default 'opened.finding>0'), e.g. 'opened.false_accept>0 or "
            "closed.false_reject>0'; scopes: opened, closed, unchanged, gone, before, after; counts: "
            + ", ".join(gate_mod.DIFF.counts),
        ),
    ] = None,
) -> None:
    """Compare two audits of one benchmark: per verifier, the findings opened, closed and unchanged."""
    gate = gate_mod.check_diff(gate_mod.read(fail_on, gate_mod.Vocabulary(gate_mod.DIFF, gate_mod.DIFF_SCOPES)))
    a, b = _read(before), _read(after)
    diff_mod.check(a.manifest, b.manifest, str(before), str(after))
    d = diff_mod.compare(a, b)
    directory = out_dir or Path("verimut-out") / f"diff-{before.resolve().name}-{after.resolve().name}"
    md, js = write_diff(directory, d, diff_mod.markdown(d))
    for table in diff_tables(d):
        out.print(table)
    added = ", ".join(d.tasks_added) or "none"
    removed = ", ".join(d.tasks_removed) or "none"
    out.print(f"tasks added: {added}; tasks removed: {removed}", highlight=False)
    for status in diff_mod.SHOWN:
        found = [c for c in d.changes if c.status == status]
        for c in found[:SHOWN]:
            line = diff_mod.change_line(c)[2:].replace("`", "")  # markdown's code marks, not for a terminal
            out.print(f"{status} {line}", highlight=False, markup=False, soft_wrap=True)
        if len(found) > SHOWN:
            out.print(f"... and {len(found) - SHOWN} more {status} (all in {md})", highlight=False)
    out.print(d.note, highlight=False)
    out.print(f"diff: {md} and {js}", highlight=False)
    fired = gate_mod.fired(gate, d.gate_counts())
    if fired:
        out.print(f"fail-on {str(gate)!r} holds: " + "; ".join(fired), highlight=False)
    elif fail_on is not None:
        out.print(f"fail-on {str(gate)!r} does not hold", highlight=False)
    raise typer.Exit(1 if fired else 0)
