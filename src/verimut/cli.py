"""The command line: `verimut audit BENCHMARK`, `verimut swap BENCHMARK`, `verimut report DIR`, `verimut ls DIR`,
`verimut show DIR CELL_ID`, `verimut families`, ...

Exit codes: 0 no confirmed false accept, 1 at least one, 2 could not audit (or audited nothing: every control
failed), 130 interrupted (SIGINT), 143 stopped (SIGTERM). `--fail-on` replaces "at least one confirmed false
accept" with an expression over the counts.
"""

from __future__ import annotations

import gc
import math
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer
from rich.markup import escape
from rich.table import Table

from verimut import adapters, cell_view, coverage, junit, report_html, rewards, sarif
from verimut import audit as audit_mod
from verimut import bundle as bundle_mod
from verimut import executor as executor_mod
from verimut import gate as gate_mod
from verimut import rank as rank_mod
from verimut import repair as repair_mod
from verimut import summary as summary_mod
from verimut import swap as swap_mod
from verimut.benchmark import Adapter
from verimut.errors import AuditError
from verimut.faults import CONTROL, FAMILIES, GRAMMARS, is_alternative
from verimut.store import LEDGER, REPAIR, REPORT, REWARDS, SUMMARY_JSON, SUMMARY_MD, Store

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
# Terminal, not Console: what is printed carries the benchmark's text, which must never drive the terminal.
err = cell_view.Terminal(stderr=True)
out = cell_view.Terminal(width=None if sys.stdout.isatty() else 140)


def _tables(s: summary_mod.Summary) -> list[Table]:
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


def _coverage_tables(fc: coverage.FrameCoverage) -> list[Table]:
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


def _swap_table(c: swap_mod.Census) -> Table:
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


class _CI(msgspec.Struct, frozen=True):
    """What a CI run asked for: the gate's expression, and the files to write."""

    fail_on: str | None = None
    junit: Path | None = None
    sarif: Path | None = None


def _ci_outputs(ci: _CI, directory: Path, locate: sarif.Locator | None) -> None:
    if ci.junit is None and ci.sarif is None:
        return
    store = Store(directory)
    m, rows = store.read_manifest(), store.rows()
    if ci.junit is not None:
        out.print(f"JUnit XML: {junit.write(m, rows, ci.junit)}")
    if ci.sarif is not None:
        out.print(f"SARIF: {sarif.write(m, rows, ci.sarif, locate)}")


def _finish(
    s: summary_mod.Summary | swap_mod.Census,
    directory: Path,
    ci: _CI | None = None,
    locate: sarif.Locator | None = None,
) -> None:
    if isinstance(s, swap_mod.Census):
        out.print(_swap_table(s))
        out.print(
            f"off-diagonal acceptances: {len(s.acceptances) or 'none found'}; with the requested effect absent "
            f"(confirmed false accepts): {len(s.false_accepts) or 'none found'}. " + s.note
        )
    else:
        for table in _tables(s):
            out.print(table)
        if s.frame_coverage is not None and s.frame_coverage.confirmed:
            for t in _coverage_tables(s.frame_coverage):
                out.print(t)
        out.print(
            f"confirmed false accepts: {len(s.false_accepts) or 'none found'}{summary_mod.per_kind(s)}; " + s.note
        )
        if s.rewards:
            out.print(f"rewards: {s.rewards['conclusion']} (per cell: {directory / REWARDS})")
        if s.alternative_families or s.false_rejects:
            alt = sum(bool(f.get("alternative")) for f in s.false_rejects)
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
    ci = ci or _CI()
    _ci_outputs(ci, directory, locate)
    gate = gate_mod.read(ci.fail_on, gate_mod.vocabulary_of(s))
    fired = gate_mod.fired(gate, gate_mod.counts_of(s))
    if fired:
        out.print(f"fail-on {str(gate)!r} holds: " + "; ".join(fired), highlight=False)
    elif ci.fail_on is not None:
        out.print(f"fail-on {str(gate)!r} does not hold", highlight=False)
    if not fired and isinstance(s, summary_mod.Summary) and s.nothing_audited is not None:
        raise AuditError(s.nothing_audited)  # the report is written; the exit says the run audited nothing
    raise typer.Exit(1 if fired else 0)


def _run(
    benchmark: str,
    version: str | None,
    options: Mapping[str, Any],
    out_dir: Path | None,
    suffix: str,
    runner: executor_mod.Executor,
    run: Callable[[Adapter, Path, executor_mod.Executor], summary_mod.Summary | swap_mod.Census],
    ci: _CI,
) -> None:
    """Load the benchmark, run one arm into its directory, release the executor, report."""
    try:
        bench = adapters.load(benchmark, version, options)
        directory = out_dir or Path("verimut-out") / f"{bench.name}-{bench.version}{suffix}"
        result = run(bench, directory, runner)
    finally:
        runner.close()
    _finish(result, directory, ci, sarif.locator(bench))


def _options(given: list[str] | None) -> dict[str, Any]:
    """`--option KEY=VALUE`s as the adapter's options (values stay strings: the adapter reads them)."""
    options: dict[str, Any] = {}
    for item in given or ():
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise AuditError(f"--option {item!r}: give KEY=VALUE")
        options[key.strip()] = value
    return options


_Version = Annotated[str | None, typer.Option("--version", "-v", help="Benchmark version (agentdojo: v1.2).")]
_Suite = Annotated[
    list[str] | None,
    # --category (BFCL) and --domain (tau2) are what those benchmarks call their suites.
    typer.Option("--suite", "-s", "--category", "--domain", help="Only these suites (repeatable)."),
]
_TaskOpt = Annotated[list[str] | None, typer.Option("--task", "-t", help="Only these task ids (repeatable).")]
_Kind = Annotated[
    list[str] | None,
    typer.Option(
        "--kind",
        "-k",
        help="Only tasks of this kind (repeatable; default all): user, or agentdojo's injection "
        "(its injection tasks' security() verifiers).",
    ),
]
_Out = Annotated[Path | None, typer.Option("--out", "-o", help="Output directory; running again resumes.")]
_Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
_Executor = Annotated[str, typer.Option(help="pool (worker processes), inprocess, or ray.")]
_Workers = Annotated[int | None, typer.Option(help="Workers (default: all cores; ray: all cores of this machine).")]
_Timeout = Annotated[float, typer.Option(help="Seconds before a cell is cut and recorded as error (pool, ray).")]
_Address = Annotated[str | None, typer.Option(help="Ray: the address of a running cluster (default: start one here).")]
_Options = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-O",
        help="An adapter option, KEY=VALUE (repeatable), e.g. workarena: configs=incident:0,1;change_request:0.",
    ),
]
_FailOn = Annotated[
    str | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 when this holds, e.g. 'false_accept>0' (the default), 'extra.false_accept>0 or error>2', "
        "'never'; a scope before the dot is a fault family (swap: a suite). Grammar: src/verimut/gate.py.",
    ),
]
_Junit = Annotated[Path | None, typer.Option("--junit", help="Also write JUnit XML here (one test case per cell).")]
_Sarif = Annotated[
    Path | None, typer.Option("--sarif", help="Also write SARIF 2.1.0 here (one result per confirmed false accept).")
]


_StandIn = Annotated[
    bool,
    typer.Option(
        "--stand-in",
        help="workarena: run against verimut's offline ServiceNow stand-in on loopback (not ServiceNow).",
    ),
]


def _with_stand_in(options: dict[str, Any], benchmark: str, stand_in: bool) -> dict[str, Any]:
    """`--stand-in` is `--option stand_in=1`, for WorkArena only."""
    if stand_in:
        if benchmark != "workarena":
            raise AuditError(f"--stand-in is for workarena, not {benchmark!r}")
        options["stand_in"] = True
    return options


@app.command()
def audit(
    benchmark: Annotated[str, typer.Argument(help="A built-in benchmark (agentdojo) or module:object.")],
    version: _Version = None,
    suite: _Suite = None,
    task: _TaskOpt = None,
    kind: _Kind = None,
    family: Annotated[
        list[str] | None, typer.Option("--family", "-f", help="Only these fault families (repeatable).")
    ] = None,
    out_dir: _Out = None,
    quiet: _Quiet = False,
    executor: _Executor = "pool",
    workers: _Workers = None,
    timeout: _Timeout = 300.0,
    address: _Address = None,
    option: _Options = None,
    fail_on: _FailOn = None,
    junit_path: _Junit = None,
    sarif_path: _Sarif = None,
    stand_in: _StandIn = False,
) -> None:
    """Audit a benchmark's verifiers with the fault grammar; resume if --out holds a run."""
    options = _with_stand_in(_options(option), benchmark, stand_in)
    # Check the gate before any work: a misspelt name should not cost a whole audit. The benchmark (and so
    # its grammar's default families) is not loaded yet: without --family, any registered family is a scope.
    scopes = (CONTROL, *(audit_mod.select_families(family) if family else FAMILIES))
    gate_mod.read(fail_on, gate_mod.Vocabulary("fault", scopes))

    def run(bench: Adapter, directory: Path, runner: executor_mod.Executor) -> summary_mod.Summary:
        selection = {"suites": suite or (), "tasks": task or (), "families": family or (), "kinds": kind or ()}
        return audit_mod.audit(bench, directory, **selection, executor=runner, console=err, quiet=quiet)

    _run(
        benchmark,
        version,
        options,
        out_dir,
        "",
        executor_mod.make(
            executor, workers, timeout, benchmark=benchmark, version=version, options=options, address=address
        ),
        run,
        _CI(fail_on, junit_path, sarif_path),
    )


@app.command()
def swap(
    benchmark: Annotated[str, typer.Argument(help="A built-in benchmark (agentdojo) or module:object.")],
    version: _Version = None,
    suite: _Suite = None,
    task: _TaskOpt = None,
    out_dir: _Out = None,
    quiet: _Quiet = False,
    executor: _Executor = "pool",
    workers: _Workers = None,
    timeout: _Timeout = 300.0,
    address: _Address = None,
    option: _Options = None,
    fail_on: _FailOn = None,
    junit_path: _Junit = None,
    sarif_path: _Sarif = None,
    stand_in: _StandIn = False,
) -> None:
    """The intent-swap census: grade each task's reference run with every other task's verifier (per suite)."""
    gate_mod.read(fail_on)  # the syntax now; the suite names once the benchmark is loaded

    def run(bench: Adapter, directory: Path, runner: executor_mod.Executor) -> swap_mod.Census:
        named = suite or (() if task else bench.swap_suites)
        chosen = audit_mod.select_tasks(bench.tasks(), named, task or ())
        suites = tuple(dict.fromkeys(swap_mod.suite_of(t) for t in chosen))
        gate_mod.read(fail_on, gate_mod.Vocabulary(swap_mod.SWAP, suites))
        return audit_mod.swap(
            bench, directory, suites=suite or (), tasks=task or (), executor=runner, console=err, quiet=quiet
        )

    options = _with_stand_in(_options(option), benchmark, stand_in)
    _run(
        benchmark,
        version,
        options,
        out_dir,
        "-swap",
        executor_mod.make(
            executor, workers, timeout, benchmark=benchmark, version=version, options=options, address=address
        ),
        run,
        _CI(fail_on, junit_path, sarif_path),
    )


@app.command()
def report(
    directory: Annotated[Path, typer.Argument(help="An audit's --out directory.")],
    reward_modules: Annotated[
        list[str] | None,
        typer.Option(
            "--rewards", help="A module that registers reward formulas (verimut.rewards.formula); repeatable."
        ),
    ] = None,
    procredit_c: Annotated[
        float, typer.Option("--procredit-c", help="ProCredit's weight c (> 0).")
    ] = rewards.DEFAULT_C,
    fail_on: _FailOn = None,
    junit_path: _Junit = None,
    sarif_path: _Sarif = None,
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
    store = Store(directory)
    m = store.read_manifest()
    gate_mod.read(fail_on, gate_mod.vocabulary_of_manifest(m))
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
            locate = sarif.locator(adapters.load(benchmark or m.benchmark, m.version))
        # The figures on every core: a report of thousands of tasks draws for seconds.
        result = audit_mod.summarize(m, rows, store, procredit_c, audit_mod.OnCores(executor_mod.Pool()))
    _finish(result, directory, _CI(fail_on, junit_path, sarif_path), locate)


@app.command()
def repair(
    directory: Annotated[Path, typer.Argument(help="A fault-arm audit's --out directory.")],
    benchmark: Annotated[
        str | None, typer.Option(help="The benchmark as given to `audit`, when not built in (module:object).")
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            help="Exit 1 when this holds (default 'new_false_reject>0'); counts: "
            + ", ".join(gate_mod.COUNTS["repair"]),
        ),
    ] = None,
    swap: Annotated[
        Path | None,
        typer.Option(help="A swap census's --out (verimut swap): its effect-absent acceptances are targets too."),
    ] = None,
) -> None:
    """Write the minimal checks for the audit's false accepts; regrade every cell (and the swap census's) with them."""
    gate = gate_mod.read(fail_on, gate_mod.Vocabulary("repair", ()))
    store = Store(directory)
    m = store.read_manifest()
    if benchmark is None and not adapters.known(m.benchmark):
        raise AuditError(f"{m.benchmark!r} is not built in: give --benchmark module:object, as given to `audit`")
    bench = adapters.load(benchmark or m.benchmark, m.version)
    with store.lock():
        with err.status("replaying and regrading every cell with the repaired verifiers ..."):
            r = repair_mod.run(bench, m, store.rows(), store, None if swap is None else Store(swap))
        page = report_html.rebuild(store)  # its before/after counts join the audit's page
    table = Table(title=f"{r.benchmark} {r.version}: the repair, regraded")
    for col in ("", "before", "after"):
        table.add_column(col)
    for row in repair_mod.table(r):
        table.add_row(*row)
    out.print(table)
    for cid, why in repair_mod.still_open(r).items():
        out.print(f"still accepted {cid}: {why}", highlight=False)
    out.print(f"{r.checks} checks in {r.module}; report: {directory / REPAIR / SUMMARY_MD} and {page}")
    fired = gate_mod.fired(gate, gate_mod.repair_counts(r))
    if fired:
        out.print(f"fail-on {str(gate)!r} holds: " + "; ".join(fired), highlight=False)
    raise typer.Exit(1 if fired else 0)


@app.command("ls")
def ls(
    directory: Annotated[Path, typer.Argument(help="An audit's (or a swap census's) --out directory.")],
    outcome: Annotated[
        list[str] | None, typer.Option("--outcome", help="Only cells with this outcome (repeatable).")
    ] = None,
    family: Annotated[
        list[str] | None, typer.Option("--family", "-f", help="Only this fault family (repeatable).")
    ] = None,
    task: _TaskOpt = None,
    suite: _Suite = None,
) -> None:
    """List cells: id, outcome, edit. Every id works with `verimut show DIR ID` (and is a link target in report.html)."""
    store = Store(directory)
    m = store.read_manifest()
    picked = cell_view.select(m, store.rows(), outcome or (), family or (), task or (), suite or ())
    width = max((len(c.cell_id) for c, _ in picked), default=0)
    try:
        for cell, result in picked:
            print(f"{cell_view.inert(cell.cell_id):<{width}}  {result:<23}  {cell_view.inert(cell.note)}")
        sys.stdout.flush()
    except BrokenPipeError:  # `verimut ls DIR | head`: the reader has all it wants
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return
    err.print(f"{len(picked)} of {len(m.cells)} cells", highlight=False)


@app.command()
def show(
    directory: Annotated[Path, typer.Argument(help="An audit's (or a swap census's) --out directory.")],
    cell_id: Annotated[str, typer.Argument(help="A cell id, as `verimut ls` and report.html give it.")],
) -> None:
    """One cell: its edit as an action diff, the end-state evidence, the verifier's checks, its rewards."""
    store = Store(directory)
    m = store.read_manifest()
    cell = cell_view.find(m, cell_id, str(directory))
    row = store.rows().get(cell_id)
    out.print(cell_view.to_rich(cell_view.view(m, cell, row, store.rewards())))


@app.command()
def families() -> None:
    """List the fault families and what each does."""
    for name, op in FAMILIES.items():
        doc = (op.__doc__ or "").strip().splitlines()
        grammars = "/".join(GRAMMARS.get(name, ("api",)))  # api: tool-call benchmarks; form: form benchmarks
        # An alternative is a correct run: the verifier should pass it (a fail is a false reject).
        kind = ", alternative run" if is_alternative(name) else ""
        out.print(f"[bold]{name}[/] [dim]({grammars}{kind})[/]  {doc[0] if doc else ''}")


# Commands whose whole implementation lives in their own module.
app.command("bundle")(bundle_mod.bundle_command)
app.command("verify")(bundle_mod.verify_command)
app.command("rank")(rank_mod.command)


def main() -> None:
    """Run the command line and exit with its code (the module's docstring lists them).

    SIGINT (Ctrl-C) and SIGTERM, to this process or to its whole group, end a command the same way: the work
    stops (forked workers stopped or killed, the ledger closed, the directory's lock released), one line on
    stderr, and exit 130 for SIGINT, 143 for SIGTERM (128 + the signal: what a shell reports for a process the
    signal ended, so a service manager sees its stop obeyed). A resumed run scores what was left.
    A benchmark's thread left running never holds the exit (`children.leave`).
    """
    import signal

    from verimut import children

    children.on_signals()

    def say(message: str) -> None:  # after a stopping signal, what broke on the way out is not news
        if children.received() is None:
            err.print(message, highlight=False, markup=False, soft_wrap=True)

    interrupted = False
    try:
        try:
            got = app(standalone_mode=False)
        finally:
            children.armed = False  # first, however the command ended: a signal now would only break the exit
        code = got if isinstance(got, int) else 0
        interrupted = code == 130  # typer answers a KeyboardInterrupt with exit code 130, silently
    except AuditError as e:
        say(f"verimut: error: {e}")
        code = 2
    except typer.Exit as e:
        code = e.exit_code
    except (typer.Abort, KeyboardInterrupt):
        interrupted, code = True, 130
    except SystemExit as e:  # a benchmark's sys.exit in this process: its code, as the interpreter would exit
        code = e.code if isinstance(e.code, int) else int(e.code is not None)
    except Exception as e:  # noqa: BLE001  (usage errors and crashes, sorted below)
        # Usage errors (unknown option, missing argument) arrive here in non-standalone mode;
        # typer vendors its own click, so recognise them by their interface.
        if hasattr(e, "format_message") and hasattr(e, "exit_code"):
            say(f"verimut: error: {e.format_message()}")
        elif children.received() is None:
            # Not exit 1, which means "confirmed false accepts": a crash means the audit could not finish.
            import traceback

            traceback.print_exc()
            say(f"verimut: internal error: {type(e).__name__}: {e}; recorded cells are kept, run again to resume")
        code = 2
    finally:
        # Everything the command made is written by now. The interpreter's last collection at exit would walk
        # every object still held (AgentDojo's suites, the manifest): 0.2 s of a census's exit, for nothing.
        gc.freeze()
    signum = children.received()
    if signum is not None or interrupted:
        err.print("verimut: interrupted; scored cells are in the ledger, run again to resume", highlight=False)
        code = 128 + (signum or signal.SIGINT)  # SIGINT: a KeyboardInterrupt no signal raised
    children.leave(code)


if __name__ == "__main__":
    main()
