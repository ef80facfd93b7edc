"""`verimut rank SCORES.csv`: which orders of a leaderboard an error budget leaves identified."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import msgspec
import typer
from rich.console import Console
from rich.table import Table

from verimut.core.errors import AuditError
from verimut.findings.rank import (
    ENVELOPE,
    ENVELOPE_NOTE,
    LOWER_BOUND,
    NOTE,
    Analysis,
    Budget,
    Report,
    analyze,
    budget_from_audit,
    envelope,
    read_scores,
)
from verimut.outputs.cell_view import Terminal


def _share(k: int | None, n: int | None, what: str) -> str:
    return f" ({k} of {n} {what})" if k is not None else " (given)"


def _print(console: Console, a: Analysis) -> None:
    for s in a.splits:
        # A heading line, not a table title: rich wraps a title at the (narrow) table's width.
        console.print(f"[bold]{s.split}[/]: {a.budget} budget, alpha {a.alpha:.4f}, beta {a.beta:.4f}")
        table = Table()
        table.add_column("system")
        for col in ("score", "low", "high"):
            table.add_column(col, justify="right")
        for x in s.systems:
            table.add_row(x.system, f"{x.score:.4f}", f"{x.low:.4f}", f"{x.high:.4f}")
        console.print(table)
        console.print(f"pairs surviving: {s.pairs_surviving}/{s.pairs}", highlight=False)
        if s.surviving:
            console.print("identified: " + ", ".join(f"{p.above} > {p.below}" for p in s.surviving), highlight=False)
        console.print(f"top-1 unique: {f'yes ({s.top1})' if s.top1 else 'no'}", highlight=False)
        console.print()


def command(
    scores: Annotated[Path, typer.Argument(help="CSV with columns system, split, score (a fraction in [0, 1]).")],
    audit: Annotated[
        Path | None, typer.Option("--audit", help="A fault-arm audit's --out directory: the error budget.")
    ] = None,
    alpha: Annotated[float | None, typer.Option("--alpha", help="False-accept budget (overrides the audit's).")] = None,
    beta: Annotated[float | None, typer.Option("--beta", help="False-reject budget (overrides the audit's).")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the full analysis here as JSON.")] = None,
) -> None:
    """Rank sensitivity: which orders of a leaderboard an error budget leaves identified (per split)."""
    if audit is None and (alpha is None or beta is None):
        raise AuditError("give --audit DIR, or both --alpha and --beta")
    rows = read_scores(scores)
    b = budget_from_audit(audit) if audit is not None else Budget(0.0, 0.0)
    # A given value replaces the audit's, and its counts with it: the envelope needs both counts.
    if alpha is not None:
        b = msgspec.structs.replace(b, alpha=alpha, alpha_k=None, alpha_n=None)
    if beta is not None:
        b = msgspec.structs.replace(b, beta=beta, beta_k=None, beta_n=None)
    analyses = [analyze(rows, b.alpha, b.beta)]
    if b.counted:
        hi = envelope(b)
        analyses.append(analyze(rows, *hi, label=f"illustrative {ENVELOPE:.0%} envelope"))
    note = NOTE + (" " + LOWER_BOUND if audit is not None else "")
    report = Report(b, analyses, note, ENVELOPE_NOTE if b.counted else None)

    # Terminal: system and split names come from a CSV, and must not drive the terminal either.
    console = Terminal(width=None if sys.stdout.isatty() else 140)
    fa = _share(b.alpha_k, b.alpha_n, "eligible tasks with a confirmed false accept")
    console.print(
        f"observed budget: alpha {b.alpha:.4f}{fa}, beta {b.beta:.4f}{_share(b.beta_k, b.beta_n, 'controls failed')}"
        + (f"; from {audit}" if audit else ""),
        highlight=False,
    )
    if b.counted:
        console.print(
            f"illustrative envelope: alpha_hi {analyses[1].alpha:.4f}, beta_hi {analyses[1].beta:.4f} "
            f"(one-sided {ENVELOPE:.0%} Clopper-Pearson upper bounds on those counts). {ENVELOPE_NOTE}",
            highlight=False,
        )
    elif audit is not None:
        console.print("no envelope: --alpha/--beta replace the audit's counts", highlight=False)
    console.print()
    for a in analyses:
        _print(console, a)
    console.print(note, highlight=False)
    if json_path is not None:
        try:
            json_path.write_bytes(msgspec.json.format(msgspec.json.encode(report)) + b"\n")
        except OSError as e:
            raise AuditError(f"cannot write {json_path}: {e}") from None
        console.print(f"analysis: {json_path}", highlight=False)
