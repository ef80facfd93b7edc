"""`verimut report DIR`: rebuild an audit's summaries and report.html from its manifest and ledger."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from verimut import adapters, api
from verimut.cli import baseline as baseline_cli
from verimut.cli import gate as gate_mod
from verimut.cli.finish import finish
from verimut.cli.options import CI, Against, BaselineFile, FailOn, Junit, Sarif
from verimut.cli.terminal import out
from verimut.core.errors import AuditError
from verimut.engine import arms
from verimut.engine import executor as executor_mod
from verimut.engine.pipeline import OnCores
from verimut.engine.store import Store
from verimut.findings import rewards
from verimut.outputs import sarif


def report(
    directory: Annotated[Path, typer.Argument(help="An audit's --out directory.")],
    reward_modules: Annotated[
        list[str] | None,
        typer.Option(
            "--rewards", help="A module that registers reward formulas (verimut.findings.rewards.formula); repeatable."
        ),
    ] = None,
    procredit_c: Annotated[
        float, typer.Option("--procredit-c", help="ProCredit's weight c (> 0).")
    ] = rewards.DEFAULT_C,
    fail_on: FailOn = None,
    junit_path: Junit = None,
    sarif_path: Sarif = None,
    baseline: BaselineFile = None,
    against: Against = None,
    benchmark: Annotated[
        str | None,
        typer.Option(help="For --sarif: the benchmark as given to `audit` (module:object), to locate its verifiers."),
    ] = None,
) -> None:
    """Rebuild summary.md/json (and rewards.json) from an audit's (or a swap census's) manifest and ledger."""
    if not math.isfinite(procredit_c) or procredit_c <= 0:
        # Checked before anything is written: a nan weight would rewrite every derived file with nulls.
        raise AuditError(f"--procredit-c must be a positive number, not {procredit_c:g}")
    rewards.load(reward_modules or [])
    given = baseline_cli.load_optional(baseline)
    store = Store(directory)
    m = store.read_manifest()
    gate_mod.read(fail_on, gate_mod.vocabulary_of_manifest(m))
    if given is not None:
        given.check(m.benchmark, m.arm)
    earlier = None if against is None else api.earlier(against, m.benchmark, arms.of(m))
    with store.lock():
        rows = store.rows()
        held = {c.cell_id for c in m.cells}
        orphans = [cid for cid in rows if cid not in held]
        if orphans:  # a manifest edited after scoring (and its hash recomputed): say what the report leaves out
            out.print(
                f"[yellow]note[/]: {len(orphans)} ledger row(s) name cells this manifest does not hold (first: "
                f"{escape(repr(orphans[0]))}); the manifest changed after they were scored, so the report leaves them out",
                highlight=False,
            )
        locate = None
        if sarif_path is not None and (benchmark is not None or adapters.known(m.benchmark)):
            locate = sarif.locator(adapters.load(benchmark or m.benchmark, m.version, m.options))
        # The figures on every core: a report of thousands of tasks draws for seconds.
        result = api.summarize(m, rows, store, procredit_c, OnCores(executor_mod.make("pool")), earlier)
    finish(result, directory, CI(fail_on, junit_path, sarif_path, baseline, against), locate, given)
