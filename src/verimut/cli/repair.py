"""`verimut repair DIR`: the minimal checks for an audit's false accepts, written and regraded (`api.repair`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from verimut import adapters, api
from verimut.cli import baseline as baseline_cli
from verimut.cli import gate as gate_mod
from verimut.cli.options import Address, BaselineFile, ExecutorName, Timeout, Workers
from verimut.cli.terminal import err, out
from verimut.core.errors import AuditError
from verimut.engine.store import REPAIR, REPORT, SUMMARY_MD, Store
from verimut.findings import baseline as baseline_mod
from verimut.repair import Report, still_open
from verimut.repair import table as repair_table


def _counts(r: Report, held: frozenset[str] = frozenset()) -> dict[str | None, dict[str, int]]:
    """What a repair's gate counts (gate.REPAIR): the regrade of the audit with the repaired verifiers. `held`: the
    findings a baseline accepts, left out of the false accepts, and of those still accepted or now rejected."""
    return {
        None: {
            "new_false_reject": len(r.new_false_rejects),
            "still_accepted": len(set(r.still_accepted) - held),
            "now_rejected": len(set(r.now_rejected) - held),
            "false_accept": r.false_accepts - len(held & {*r.still_accepted, *r.now_rejected}),
            "regrade_mismatch": len(r.regrade_mismatches),
        }
    }


def repair(
    directory: Annotated[Path, typer.Argument(help="A fault-arm audit's --out directory.")],
    benchmark: Annotated[
        str | None, typer.Option(help="The benchmark as given to `audit`, when not built in (module:object).")
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            help="Exit 1 when this holds (default 'new_false_reject>0'); counts: " + ", ".join(gate_mod.REPAIR.counts),
        ),
    ] = None,
    swap: Annotated[
        Path | None,
        typer.Option(help="A swap census's --out (verimut swap): its effect-absent acceptances are targets too."),
    ] = None,
    executor: ExecutorName = "pool",
    workers: Workers = None,
    timeout: Timeout = 300.0,
    address: Address = None,
    baseline: BaselineFile = None,
) -> None:
    """Write the minimal checks for the audit's false accepts; regrade every cell (and the swap census's) with them,
    through the executor, as the audit scored them (a cell past --timeout is recorded as not regraded)."""
    gate = gate_mod.read(fail_on, gate_mod.Vocabulary(gate_mod.REPAIR, ()))
    given = baseline_cli.load_optional(baseline)
    store = Store(directory)
    m = store.read_manifest()
    if given is not None:
        given.check(m.benchmark, m.arm)
    if benchmark is None and not adapters.known(m.benchmark):
        raise AuditError(f"{m.benchmark!r} is not built in: give --benchmark module:object, as given to `audit`")
    with err.status("replaying and regrading every cell with the repaired verifiers ..."):
        r = api.repair(
            directory,
            benchmark=benchmark,
            census=swap,
            executor=executor,
            workers=workers,
            timeout=timeout,
            address=address,
        )
    table = Table(title=f"{r.benchmark} {r.version}: the repair, regraded")
    for col in ("", "before", "after"):
        table.add_column(col)
    for row in repair_table(r):
        table.add_row(*row)
    out.print(table)
    for cid, why in still_open(r).items():
        out.print(f"still accepted {cid}: {why}", highlight=False)
    out.print(f"{r.checks} checks in {r.module}; report: {directory / REPAIR / SUMMARY_MD} and {directory / REPORT}")
    held: frozenset[str] = frozenset()
    if given is not None:
        found = baseline_mod.match(given.baseline, m, store.rows())
        held = frozenset(found.held)
        for line in given.lines(found):
            out.print(line, highlight=False, markup=False, soft_wrap=True)
    fired = gate_mod.fired(gate, _counts(r, held))
    if fired:
        out.print(f"fail-on {str(gate)!r} holds: " + "; ".join(fired), highlight=False)
    raise typer.Exit(1 if fired else 0)
