"""The options commands share, declared once: each command module names the ones it takes.

`verimut audit` and `verimut swap` take the same eighteen (`run_command`): the benchmark and its version, suites and
tasks, the output directory, the executor, the adapter's options, the CI outputs, the baseline and the audit to
compare with, gathered into one `RunOptions`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from verimut.core.errors import AuditError

Benchmark = Annotated[str, typer.Argument(help="A built-in benchmark (agentdojo) or module:object.")]


def _adapter_options(given: list[str] | None) -> dict[str, Any]:
    """`--option KEY=VALUE`s as the adapter's options (values stay strings: the adapter reads them)."""
    options: dict[str, Any] = {}
    for item in given or ():
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise AuditError(f"--option {item!r}: give KEY=VALUE")
        options[key.strip()] = value
    return options


Version = Annotated[str | None, typer.Option("--version", "-v", help="Benchmark version (agentdojo: v1.2).")]
Suite = Annotated[
    list[str] | None,
    # --category (BFCL) and --domain (tau2) are what those benchmarks call their suites.
    typer.Option("--suite", "-s", "--category", "--domain", help="Only these suites (repeatable)."),
]
TaskOpt = Annotated[list[str] | None, typer.Option("--task", "-t", help="Only these task ids (repeatable).")]
Kind = Annotated[
    list[str] | None,
    typer.Option(
        "--kind",
        "-k",
        help="Only tasks of this kind (repeatable; default all): user, or agentdojo's injection "
        "(its injection tasks' security() verifiers).",
    ),
]
Out = Annotated[Path | None, typer.Option("--out", "-o", help="Output directory; running again resumes.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
ExecutorName = Annotated[str, typer.Option(help="pool (worker processes), inprocess, or ray.")]
Workers = Annotated[int | None, typer.Option(help="Workers (default: all cores; ray: all cores of this machine).")]
Timeout = Annotated[float, typer.Option(help="Seconds before a cell is cut and recorded as error (pool, ray).")]
Address = Annotated[str | None, typer.Option(help="Ray: the address of a running cluster (default: start one here).")]
AdapterOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-O",
        help="An adapter option, KEY=VALUE (repeatable), e.g. workarena: configs=incident:0,1;change_request:0.",
    ),
]
FailOn = Annotated[
    str | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 when this holds, e.g. 'false_accept>0' (the default), 'extra.false_accept>0 or error>2', "
        "'never'; a scope before the dot is a fault family (swap: a suite). Grammar: src/verimut/cli/gate.py.",
    ),
]
Junit = Annotated[Path | None, typer.Option("--junit", help="Also write JUnit XML here (one test case per cell).")]
Sarif = Annotated[
    Path | None, typer.Option("--sarif", help="Also write SARIF 2.1.0 here (one result per confirmed false accept).")
]


BaselineFile = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        help="A baseline file (verimut baseline DIR > FILE): the findings it holds are left out of the gate, "
        "JUnit and SARIF, and those that no longer occur are named.",
    ),
]
Against = Annotated[
    Path | None,
    typer.Option(
        "--against",
        help="An earlier audit of the same benchmark (its --out): report.html gets a section on the findings this "
        "run opened and closed against it (verimut diff OTHER DIR).",
    ),
]


StandIn = Annotated[
    bool,
    typer.Option(
        "--stand-in",
        help="workarena: run against verimut's offline ServiceNow stand-in on loopback (not ServiceNow).",
    ),
]


DatasetOpt = Annotated[
    Path | None,
    typer.Option(
        "--dataset",
        help="reward:FILE.py:FUNC: the dataset its rows come from (.jsonl, .json, .csv, .parquet); "
        "the same as --option dataset=FILE.",
    ),
]


def _with_dataset(options: dict[str, Any], benchmark: str, dataset: Path | None) -> dict[str, Any]:
    """`--dataset FILE` is `--option dataset=FILE`, for a reward-function target only."""
    if dataset is not None:
        if not benchmark.startswith("reward:"):
            raise AuditError(f"--dataset is for a reward function (reward:FILE.py:FUNC), not {benchmark!r}")
        options["dataset"] = str(dataset)
    return options


def _with_stand_in(options: dict[str, Any], benchmark: str, stand_in: bool) -> dict[str, Any]:
    """`--stand-in` is `--option stand_in=1`, for WorkArena only."""
    if stand_in:
        if benchmark != "workarena":
            raise AuditError(f"--stand-in is for workarena, not {benchmark!r}")
        options["stand_in"] = True
    return options


class CI(msgspec.Struct, frozen=True):
    """What a CI run asked for: the gate's expression, the files to write, the baseline whose findings it leaves
    out, and an earlier audit to compare with."""

    fail_on: str | None = None
    junit: Path | None = None
    sarif: Path | None = None
    baseline: Path | None = None
    against: Path | None = None


class RunOptions(msgspec.Struct, frozen=True):
    """What every command that runs an arm is given (the parameters of `run_command`)."""

    benchmark: str
    version: str | None = None
    suite: list[str] | None = None
    task: list[str] | None = None
    out_dir: Path | None = None
    quiet: bool = False
    executor: str = "pool"
    workers: int | None = None
    timeout: float = 300.0
    address: str | None = None
    option: list[str] | None = None
    fail_on: str | None = None
    junit_path: Path | None = None
    sarif_path: Path | None = None
    baseline: Path | None = None
    against: Path | None = None
    stand_in: bool = False
    dataset: Path | None = None

    def adapter_options(self) -> dict[str, Any]:
        options = _with_stand_in(_adapter_options(self.option), self.benchmark, self.stand_in)
        return _with_dataset(options, self.benchmark, self.dataset)

    def ci(self) -> CI:
        return CI(self.fail_on, self.junit_path, self.sarif_path, self.baseline, self.against)


def _param(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


# In --help order: what is audited first, the command's own options (families, kinds) next, then how and where.
_WHAT = [
    _param("benchmark", Benchmark),
    _param("version", Version, None),
    _param("suite", Suite, None),
    _param("task", TaskOpt, None),
]
_HOW = [
    _param("out_dir", Out, None),
    _param("quiet", Quiet, False),
    _param("executor", ExecutorName, "pool"),
    _param("workers", Workers, None),
    _param("timeout", Timeout, 300.0),
    _param("address", Address, None),
    _param("option", AdapterOptions, None),
    _param("fail_on", FailOn, None),
    _param("junit_path", Junit, None),
    _param("sarif_path", Sarif, None),
    _param("baseline", BaselineFile, None),
    _param("against", Against, None),
    _param("stand_in", StandIn, False),
    _param("dataset", DatasetOpt, None),
]
assert [p.name for p in (*_WHAT, *_HOW)] == list(RunOptions.__struct_fields__)


def run_command(fn: Callable[..., None]) -> Callable[..., None]:
    """A command `fn(run: RunOptions, **its own options)` with the shared options added to its signature (typer
    reads the signature), and gathered into `run` when it is called."""
    own = [
        p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        for p in inspect.signature(fn, eval_str=True).parameters.values()
        if p.name != "run"
    ]
    params = [*_WHAT, *own, *_HOW]

    @functools.wraps(fn)
    def command(**given: Any) -> None:
        shared = {name: given.pop(name) for name in RunOptions.__struct_fields__}
        fn(RunOptions(**shared), **given)

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    return command
