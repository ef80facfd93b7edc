"""What the command line prints: its two consoles, and a run's results as terminal tables.

Terminal, not Console: what is printed carries the benchmark's text, which must never drive the terminal.
"""

from __future__ import annotations

import sys

from rich.table import Table

from verimut.findings import coverage
from verimut.findings import diff as diff_mod
from verimut.findings import summary as summary_mod
from verimut.findings import swap as swap_mod
from verimut.outputs.cell_view import Terminal

err = Terminal(stderr=True)
out = Terminal(width=None if sys.stdout.isatty() else 140)


def outcome_tables(s: summary_mod.Summary) -> list[Table]:
    """One table per task kind (user tasks, AgentDojo's injection tasks), or one when every task is a user task;
    then the alternative runs' tables, apart from the planted faults'."""
    present = [o for o in summary_mod.OUTCOMES if s.total(o, alternatives=False)]
    tables = []
    for kind, counts in summary_mod.kind_tables(s):
        title = f"{s.benchmark} {s.version}: outcomes per fault family" + (f", {kind}" if kind else "")
        tables.append(_table(title, s.split(counts)[0], present, "false_accept"))
    if s.alternative_families:
        for kind, counts in summary_mod.kind_tables(s):
            title = "alternative runs: correct runs by another route" + (f", {kind}" if kind else "")
            tables.append(_table(title, s.split(counts)[1], summary_mod.ALT_OUTCOMES, "false_reject"))
    return tables


def _table(title: str, counts: dict[str, dict[str, int]], columns: list[str], finding: str) -> Table:
    table = Table(title=title)
    table.add_column("family")
    for o in columns:
        table.add_column(o, justify="right", style="bold red" if o == finding else None)
    for fam, c in counts.items():
        table.add_row(fam, *(str(c.get(o, 0)) for o in columns))
    return table


BELOW_FULL_SHOWN = 10  # the terminal lists this many verifiers below 1.0; summary.md lists them all


def coverage_tables(fc: coverage.FrameCoverage) -> list[Table]:
    """Each suite's median frame coverage, and the verifiers with the lowest coverage (capped to a screen)."""
    suites = Table(title="frame coverage: the share of confirmed side effects each verifier rejects")
    for col in ("suite", "verifiers", "with a side effect", "median", "below 1.0", "false accepts"):
        suites.add_column(col, justify="left" if col == "suite" else "right")
    groups = list(fc.suites.items()) + ([(f"kind: {k}", g) for k, g in fc.kinds.items()] if len(fc.kinds) > 1 else [])
    for name, g in groups:
        suites.add_row(
            name or "(no suite)",
            str(g.verifiers),
            str(g.with_coverage),
            coverage.fmt(g.median),
            str(g.below_full),
            str(g.false_accepts),
        )
    low = fc.below_full()
    if not low:
        return [suites]
    shown = low[:BELOW_FULL_SHOWN]
    more = f" (lowest {len(shown)} of {len(low)}; all in summary.md)" if len(low) > len(shown) else ""
    verifiers = Table(title=f"verifiers below 1.0{more}")
    for col in ("verifier", "side effects", "rejected", "false accepts", "coverage"):
        verifiers.add_column(col, justify="left" if col == "verifier" else "right")
    for task, v in shown:
        verifiers.add_row(task, str(v.side_effects), str(v.rejected), str(v.false_accepts), coverage.fmt(v.coverage))
    return [suites, verifiers]


def swap_table(c: swap_mod.Census) -> Table:
    table = Table(title=f"{c.benchmark} {c.version}: intent-swap census (valid cells / verifier passes per rung)")
    table.add_column("suite")
    table.add_column("row")
    for col in ("cells", "valid", "passes", "effect present", "effect absent", "other"):
        table.add_column(col, justify="right", style="bold red" if col == "effect absent" else None)
    for suite, rows in c.table.items():
        for key, n in rows.items():
            if key == "control":
                ok = n.get("control_pass", 0)
                table.add_row(
                    swap_mod.suite_title(suite),
                    "diag (control)",
                    str(n["cells"]),
                    str(n.get("scored", 0)),
                    f"{ok}/{n['cells']}",
                    "",
                    "",
                    "",
                )
                continue
            other = sum(v for k, v in n.items() if k not in ("cells", "scored", "valid", "passed", *swap_mod.VALID))
            table.add_row(
                swap_mod.suite_title(suite),
                f"rung {key}" if key != "read-only" else "read-only",
                str(n["cells"]),
                str(n.get("valid", 0)),
                str(n.get("passed", 0)),
                str(n.get(swap_mod.ACCEPTED[0], 0)),
                str(n.get(swap_mod.ACCEPTED[1], 0)),
                str(other),
            )
    return table


def diff_tables(d: diff_mod.Diff) -> list[Table]:
    """A diff's counts per kind of finding, and its verifiers with a finding opened, closed or gone."""
    counts = Table(title=f"verimut diff: {diff_mod.title(d)}")
    for col in ("finding", "before", "after", *diff_mod.STATUSES):
        counts.add_column(
            col, justify="left" if col == "finding" else "right", style="bold red" if col == "opened" else None
        )
    for k in d.counts["opened"]:
        counts.add_row(
            k, str(d.found["before"][k]), str(d.found["after"][k]), *(str(d.counts[s][k]) for s in diff_mod.STATUSES)
        )
    tables = [counts]
    per = diff_mod.moved(d)
    if per:
        verifiers = Table(title="per verifier: findings opened, closed or gone")
        for col in ("verifier", *diff_mod.STATUSES):
            verifiers.add_column(col)
        for task, by in per.items():
            verifiers.add_row(task, *(diff_mod.kinds_text(by.get(s, {})) for s in diff_mod.STATUSES))
        tables.append(verifiers)
    if d.coverage:
        moved = Table(title="frame coverage moved")
        for col in ("verifier", "before", "after", "side effects"):
            moved.add_column(col, justify="left" if col == "verifier" else "right")
        for mv in d.coverage:
            moved.add_row(
                mv.task,
                coverage.fmt(mv.before),
                coverage.fmt(mv.after),
                f"{mv.before_side_effects} → {mv.after_side_effects}",
            )
        tables.append(moved)
    return tables
