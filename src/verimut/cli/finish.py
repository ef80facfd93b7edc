"""How a run ends on the command line: its tables, where its files are, the CI files asked for, and the gate's exit.

Exit codes (cli/app.py): 0 the gate does not hold, 1 it holds (by default: a confirmed false accept), 2 the run
audited nothing (every control failed) or could not run.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from verimut.cli import gate as gate_mod
from verimut.cli.baseline import Given
from verimut.cli.options import CI
from verimut.cli.terminal import coverage_tables, out, outcome_tables, swap_table
from verimut.core.errors import AuditError
from verimut.core.records import CellResult
from verimut.engine import arms
from verimut.engine.store import LEDGER, REPORT, REWARDS, SUMMARY_JSON, SUMMARY_MD, Store
from verimut.findings import baseline as baseline_mod
from verimut.findings import diff as diff_mod
from verimut.findings import summary as summary_mod
from verimut.findings import swap as swap_mod
from verimut.outputs import junit, sarif


def _ci_outputs(ci: CI, directory: Path, locate: sarif.Locator | None, given: Given | None) -> list[CellResult] | None:
    """Write the CI files asked for; with a baseline, say what it holds and return the rows it holds (for the
    gate, which leaves them out)."""
    if ci.junit is None and ci.sarif is None and given is None and ci.against is None:
        return None
    store = Store(directory)
    m, rows = store.read_manifest(), store.rows()
    found = None if given is None else baseline_mod.match(given.baseline, m, rows)
    if found is not None and given is not None:
        for line in given.lines(found):
            out.print(line, highlight=False, markup=False, soft_wrap=True)
    if ci.against is not None:
        d = diff_mod.compare(
            diff_mod.Audited(*Store(ci.against).finished(), str(ci.against)),
            diff_mod.Audited(m, rows, str(directory)),
        )
        out.print(f"against {ci.against}: {diff_line(d)} (report.html: section 'Against')", highlight=False)
    if ci.junit is not None:
        out.print(f"JUnit XML: {junit.write(m, rows, ci.junit, found)}")
    if ci.sarif is not None:
        out.print(f"SARIF: {sarif.write(m, rows, ci.sarif, locate, baseline=found)}")
    return None if found is None else [rows[cid] for cid in found.held]


def diff_line(d: diff_mod.Diff) -> str:
    """One line of a diff: each status's findings by kind."""
    parts = [f"{status} {sum(d.counts[status].values())}" for status in diff_mod.STATUSES]
    opened = diff_mod.kinds_text(d.counts["opened"])
    return ", ".join(parts) + (f" ({opened} opened)" if opened else "")


def finish(
    s: summary_mod.Summary | swap_mod.Census,
    directory: Path,
    ci: CI | None = None,
    locate: sarif.Locator | None = None,
    given: Given | None = None,
) -> None:
    if isinstance(s, swap_mod.Census):
        out.print(swap_table(s))
        out.print(
            f"off-diagonal acceptances: {len(s.acceptances) or 'none found'}; with the requested effect absent "
            f"(confirmed false accepts): {len(s.false_accepts) or 'none found'}. " + s.note
        )
    else:
        for table in outcome_tables(s):
            out.print(table)
        if s.frame_coverage is not None and s.frame_coverage.confirmed:
            for t in coverage_tables(s.frame_coverage):
                out.print(t)
        out.print(
            f"confirmed false accepts: {len(s.false_accepts) or 'none found'}{summary_mod.per_kind(s)}; " + s.note
        )
        if s.null_runs is not None:
            n = s.null_runs
            out.print(
                f"vacuous verifiers: {n.vacuous} of {n.graded} give full reward to doing nothing "
                f"({n.nothing_to_do} task(s) apart with nothing to do: the start state already satisfies them)"
            )
        if s.rewards:
            out.print(f"rewards: {s.rewards['conclusion']} (per cell: {directory / REWARDS})")
            if s.rewards.get("vacuous"):
                out.print(f"rewards: {s.rewards['vacuous']}")
        if s.alternative_families or s.false_rejects:
            alt = sum(f.alternative for f in s.false_rejects)
            out.print(
                f"false rejects (the verifier fails a correct end state): {len(s.false_rejects) or 'none found'}"
                + (f", {alt} of them alternative runs" if alt else "")
                + " (each with its evidence in the report)"
            )
    if s.control_failures:
        out.print(f"[bold red]{len(s.control_failures)} control(s) failed[/]: see the report")
    out.print(
        f"report: {directory / REPORT} and {directory / SUMMARY_MD}  "
        f"(machine-readable: {directory / SUMMARY_JSON}, ledger: {directory / LEDGER})"
    )
    lost = [r.cell_id for r in Store(directory).rows().values() if r.lost]
    if lost:
        out.print(
            f"[bold red]{len(lost)} cell(s) lost to the machinery[/] (a worker killed, a browser closed; first: "
            f"{escape(lost[0])}), not scored even after a retry: run the same command again to score them"
        )
    ci = ci or CI()
    held = _ci_outputs(ci, directory, locate, given)
    gate = gate_mod.read(ci.fail_on, gate_mod.vocabulary_of(s))
    counts = gate_mod.counts_of(s)
    if held is not None:  # the gate counts what the baseline does not hold
        arm = arms.SWAP_ARM if isinstance(s, swap_mod.Census) else arms.FAULT
        counts = gate_mod.discount(counts, held, arm)
    fired = gate_mod.fired(gate, counts)
    if fired:
        out.print(f"fail-on {str(gate)!r} holds: " + "; ".join(fired), highlight=False)
    elif ci.fail_on is not None or held:
        left_out = f" ({len(held)} baselined finding(s) left out)" if held else ""
        out.print(f"fail-on {str(gate)!r} does not hold{left_out}", highlight=False)
    if not fired and isinstance(s, summary_mod.Summary) and s.nothing_audited is not None:
        raise AuditError(s.nothing_audited)  # the report is written; the exit says the run audited nothing
    if not fired and lost:  # a pass would hide what the lost cells may hold
        raise AuditError(f"{len(lost)} cell(s) lost to the machinery: run the same command again to score them")
    raise typer.Exit(1 if fired else 0)
