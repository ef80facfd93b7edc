"""The command line: `verimut audit BENCHMARK`, `verimut swap BENCHMARK`, `verimut report DIR`, `verimut ls DIR`,
`verimut show DIR CELL_ID`, `verimut diff A B`, `verimut baseline DIR`, `verimut families`, ...

Exit codes: 0 no confirmed false accept, 1 at least one, 2 could not audit (or audited nothing: every control
failed), 130 interrupted (SIGINT), 143 stopped (SIGTERM). `--fail-on` replaces "at least one confirmed false
accept" with an expression over the counts.
"""

from __future__ import annotations

import gc

import typer

from verimut.cli import audit, baseline, bundle, cells, diff, families, rank, repair, report
from verimut.cli.terminal import err
from verimut.core.errors import AuditError

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
# One module per command (docs/commands.md), in the order `verimut --help` lists them.
app.command("audit")(audit.audit)
app.command("swap")(audit.swap)
app.command("report")(report.report)
app.command("repair")(repair.repair)
app.command("ls")(cells.ls)
app.command("show")(cells.show)
app.command("diff")(diff.diff)
app.command("baseline")(baseline.baseline)
app.command("families")(families.families)
app.command("bundle")(bundle.bundle)
app.command("verify")(bundle.verify_bundle)
app.command("rank")(rank.command)


def main() -> None:
    """Run the command line and exit with its code (the module's docstring lists them).

    SIGINT (Ctrl-C) and SIGTERM, to this process or to its whole group, end a command the same way: the work
    stops (forked workers stopped or killed, the ledger closed, the directory's lock released), one line on
    stderr, and exit 130 for SIGINT, 143 for SIGTERM (128 + the signal: what a shell reports for a process the
    signal ended, so a service manager sees its stop obeyed). A resumed run scores what was left.
    A benchmark's thread left running never holds the exit (`children.leave`).
    """
    import signal

    from verimut.core import children

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
