"""`verimut audit BENCHMARK` (the fault grammar) and `verimut swap BENCHMARK` (the intent-swap census)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from verimut import adapters, api
from verimut.cli import baseline as baseline_cli
from verimut.cli import gate as gate_mod
from verimut.cli.finish import finish
from verimut.cli.options import Kind, RunOptions, run_command
from verimut.cli.progress import bar
from verimut.cli.terminal import err
from verimut.core.benchmark import Adapter
from verimut.core.errors import AuditError
from verimut.engine import blind_spots, pipeline
from verimut.engine import executor as executor_mod
from verimut.engine.arms import FAULT, SWAP_ARM, Arm
from verimut.engine.executor import Executor
from verimut.engine.scoring import Source
from verimut.findings.summary import Summary
from verimut.findings.swap import Census, suite_of
from verimut.grammar import oos
from verimut.grammar.faults import CONTROL, FAMILIES
from verimut.outputs import sarif

Family = Annotated[list[str] | None, typer.Option("--family", "-f", help="Only these fault families (repeatable).")]
Aim = Annotated[
    str | None,
    typer.Option(
        "--aim",
        help="Aim the out-of-scope search by what each verifier reads: plant one write per confirmed blind spot "
        "(blind-spot) or per verifier (verifier), and report the other writes there as proven unchecked "
        "(default: plant every write). Needs an adapter that records reads and can fork and patch.",
    ),
]


def _run(run: RunOptions, which: Arm, arm: Callable[[Adapter, Path, Executor, Source], Summary | Census]) -> None:
    """Load the benchmark, run one arm into its directory, release the executor, report."""
    options = run.adapter_options()
    given = baseline_cli.load_optional(run.baseline)  # a bad baseline file before any work
    suffix = "" if which.edits else "-swap"
    runner = executor_mod.make(run.executor, run.workers, run.timeout, address=run.address)
    try:
        bench = adapters.load(run.benchmark, run.version, options)
        if given is not None:
            given.check(bench.name, which.name)
        directory = run.out_dir or Path("verimut-out") / f"{bench.name}-{bench.version}{suffix}"
        # How a worker that does not fork loads the benchmark (Ray): as it was named here.
        result = arm(bench, directory, runner, Source.here(run.benchmark, run.version, options))
    finally:
        runner.close()
    finish(result, directory, run.ci(), sarif.locator(bench), given)


@run_command
def audit(run: RunOptions, kind: Kind = None, family: Family = None, aim: Aim = None) -> None:
    """Audit a benchmark's verifiers with the fault grammar; resume if --out holds a run."""
    run.adapter_options()  # a bad --option or --stand-in first, as before anything else
    if aim is not None and aim not in oos.AIMS:
        raise AuditError(f"--aim {aim!r}: give one of {', '.join(oos.AIMS)}")
    # Check the gate before any work: a misspelt name should not cost a whole audit. The benchmark (and so
    # its grammar's default families) is not loaded yet: without --family, any registered family is a scope.
    scopes = (CONTROL, *(pipeline.select_families(family) if family else FAMILIES))
    gate_mod.read(run.fail_on, gate_mod.Vocabulary(FAULT, scopes))

    def arm(bench: Adapter, directory: Path, runner: Executor, source: Source) -> Summary:
        unable = blind_spots.can_confirm(bench) if aim is not None else None
        if unable is not None:
            err.print(f"--aim does nothing here: {unable}; every out-of-scope write is planted")
        with bar(err, run.quiet) as progress:
            return api.audit(
                bench,
                directory,
                suites=run.suite or (),
                tasks=run.task or (),
                families=family or (),
                kinds=kind or (),
                executor=runner,
                progress=progress,
                source=source,
                against=run.against,
                aim=aim,
            )

    _run(run, FAULT, arm)


@run_command
def swap(run: RunOptions) -> None:
    """The intent-swap census: grade each task's reference run with every other task's verifier (per suite)."""
    gate_mod.read(run.fail_on)  # the syntax now; the suite names once the benchmark is loaded

    def arm(bench: Adapter, directory: Path, runner: Executor, source: Source) -> Census:
        named = run.suite or (() if run.task else bench.swap_suites)
        chosen = pipeline.select_tasks(bench.tasks(), named, run.task or ())
        suites = tuple(dict.fromkeys(suite_of(t) for t in chosen))
        gate_mod.read(run.fail_on, gate_mod.Vocabulary(SWAP_ARM, suites))
        with bar(err, run.quiet) as progress:
            return api.swap(
                bench,
                directory,
                suites=run.suite or (),
                tasks=run.task or (),
                executor=runner,
                progress=progress,
                source=source,
                against=run.against,
            )

    run.adapter_options()
    _run(run, SWAP_ARM, arm)
