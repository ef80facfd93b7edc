"""The command line: `verimut audit BENCHMARK`, `verimut report DIR`, `verimut families`.

Exit codes: 0 no confirmed false accept, 1 at least one, 2 could not audit.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from verimut import adapters
from verimut import audit as audit_mod
from verimut import executor as executor_mod
from verimut import ledger as ledger_mod
from verimut import manifest as manifest_mod
from verimut import summary as summary_mod
from verimut.errors import AuditError
from verimut.faults import FAMILIES

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
err = Console(stderr=True)
out = Console(width=None if sys.stdout.isatty() else 140)


def _table(s: summary_mod.Summary) -> Table:
    present = [o for o in summary_mod.OUTCOMES if s.total(o)]
    table = Table(title=f"{s.benchmark} {s.version}: outcomes per fault family")
    table.add_column("family")
    for o in present:
        table.add_column(o, justify="right", style="bold red" if o == "false_accept" else None)
    for fam, c in s.counts.items():
        table.add_row(fam, *(str(c.get(o, 0)) for o in present))
    return table


def _finish(s: summary_mod.Summary, directory: Path) -> None:
    out.print(_table(s))
    fa = len(s.false_accepts)
    out.print(f"confirmed false accepts: {fa or 'none found'}; " + s.note)
    if s.control_failures:
        out.print(f"[bold red]{len(s.control_failures)} control(s) failed[/]: see the report")
    out.print(
        f"report: {directory / 'summary.md'}  (machine-readable: {directory / 'summary.json'}, ledger: {directory / ledger_mod.LEDGER})"
    )
    raise typer.Exit(s.exit_code)


@app.command()
def audit(
    benchmark: Annotated[str, typer.Argument(help="A built-in benchmark (agentdojo) or module:object.")],
    version: Annotated[
        Optional[str], typer.Option("--version", "-v", help="Benchmark version (agentdojo: v1.2).")
    ] = None,
    suite: Annotated[Optional[list[str]], typer.Option("--suite", "-s", help="Only these suites (repeatable).")] = None,
    task: Annotated[Optional[list[str]], typer.Option("--task", "-t", help="Only these task ids (repeatable).")] = None,
    family: Annotated[
        Optional[list[str]], typer.Option("--family", "-f", help="Only these fault families (repeatable).")
    ] = None,
    out_dir: Annotated[
        Optional[Path], typer.Option("--out", "-o", help="Output directory; running again resumes.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    executor: Annotated[str, typer.Option(help="pool (worker processes) or inprocess.")] = "pool",
    workers: Annotated[Optional[int], typer.Option(help="Worker processes for the pool (default: all cores).")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds before a cell is cut and recorded as error (pool).")] = 300.0,
) -> None:
    """Audit a benchmark's verifiers with the fault grammar; resume if --out holds a run."""
    runner = executor_mod.make(executor, workers, timeout)
    bench = adapters.load(benchmark, version)
    directory = out_dir or Path("verimut-out") / f"{bench.name}-{bench.version}"
    s = audit_mod.audit(
        bench,
        directory,
        suites=suite or (),
        tasks=task or (),
        families=family or (),
        executor=runner,
        console=err,
        quiet=quiet,
    )
    _finish(s, directory)


@app.command()
def report(directory: Annotated[Path, typer.Argument(help="An audit's --out directory.")]) -> None:
    """Rebuild summary.md and summary.json from an audit's manifest and ledger."""
    m = manifest_mod.read(directory)
    rows = ledger_mod.Ledger(directory).read()
    _finish(summary_mod.write(m, rows, directory), directory)


@app.command()
def families() -> None:
    """List the fault families and what each does."""
    for name, op in FAMILIES.items():
        doc = (op.__doc__ or "").strip().splitlines()
        out.print(f"[bold]{name}[/]  {doc[0] if doc else ''}")


def main() -> None:
    try:
        code = app(standalone_mode=False)
    except AuditError as e:
        err.print(f"verimut: error: {e}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err.print("verimut: interrupted; scored cells are in the ledger, run again to resume")
        sys.exit(130)
    except Exception as e:
        # Usage errors (unknown option, missing argument) arrive here in non-standalone mode;
        # typer vendors its own click, so recognise them by their interface.
        if hasattr(e, "format_message") and hasattr(e, "exit_code"):
            err.print(f"verimut: error: {e.format_message()}", highlight=False, soft_wrap=True)
            sys.exit(2)
        raise
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
