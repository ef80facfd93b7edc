"""verimut's public API: `audit`, `swap` and `repair`, as the command line and the pytest plugin run them.

    from verimut.api import audit, repair, swap

    summary = audit("agentdojo", "verimut-out/agentdojo", suites=["banking"], executor="pool")
    census = swap("agentdojo", "verimut-out/agentdojo-swap", suites=["banking"])
    report = repair("verimut-out/agentdojo")

Each writes one output directory and returns what its summary says; running again on the same
directory resumes. A benchmark is a name (built in, an installed entry point, or `module:object`) or an adapter
object; an executor is a name (`inprocess`, `pool`, `ray`, or one an entry point adds) or an Executor, which the
caller then closes. Bad input raises `verimut.AuditError` with a one-line message (docs/api.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from verimut import adapters
from verimut.core.benchmark import USER, Adapter, Benchmark, kind_of, resolve
from verimut.core.errors import AuditError
from verimut.core.records import CellResult, Manifest
from verimut.engine import arms, pipeline
from verimut.engine import executor as executor_mod
from verimut.engine import manifest as manifest_mod
from verimut.engine.arms import FAULT, SWAP_ARM, Arm
from verimut.engine.executor import DEFAULT_TIMEOUT, Executor
from verimut.engine.pipeline import OnCores, Progress
from verimut.engine.scoring import Source
from verimut.engine.store import Store
from verimut.findings import diff as diff_mod
from verimut.findings import rewards
from verimut.findings.summary import Summary
from verimut.findings.swap import Census
from verimut.grammar.oos import AIMS
from verimut.outputs import report_html
from verimut.repair import Report
from verimut.repair import run as run_repair

Bench = str | Benchmark | Adapter


_PATHS_REQUIRED = ("out", "directory")


def _typed(
    paths: Mapping[str, object] = {}, names: Mapping[str, object] = {}, numbers: Mapping[str, object] = {}
) -> None:
    """Arguments of the wrong type, said in one line (the command line's are typed by its parser): a path that is
    not one, a string where a list of names is meant (`suites="banking"` was read as the suites "b", "a", ...)."""
    for what, value in paths.items():  # None only where the argument is optional (its default)
        if (value is not None or what in _PATHS_REQUIRED) and not isinstance(value, str | os.PathLike):
            raise AuditError(f"{what} must be a path (str or pathlib.Path), not {type(value).__name__}")
    for what, value in names.items():
        if isinstance(value, str):
            raise AuditError(f"{what} must be a list of names, not the string {value!r}: {what}=[{value!r}]")
        if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
            raise AuditError(f"{what} must be a list of names (str), not {type(value).__name__}")
    for what, value in numbers.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise AuditError(f"{what} must be a number, not {type(value).__name__}")


def _bench(benchmark: Bench, version: str | None, options: Mapping[str, Any] | None) -> tuple[Adapter, Source | None]:
    """The adapter, and how a worker that does not fork loads it (a name only: an object cannot travel)."""
    if options is not None and not isinstance(options, Mapping):
        raise AuditError(f"options must be a mapping of names to values, not {type(options).__name__}")
    if version is not None and not isinstance(version, str):
        raise AuditError(f"version must be a str, not {type(version).__name__}")
    if not isinstance(benchmark, str | Adapter) and not adapters.implements(benchmark):
        raise AuditError(
            f"benchmark must be a name (str) or an adapter object (docs/adapters.md), not {type(benchmark).__name__}"
        )
    if isinstance(benchmark, str):
        return adapters.load(benchmark, version, options), Source.here(benchmark, version, options)
    if options:
        raise AuditError("options are for a benchmark given by name: an adapter object is already made")
    return (benchmark if isinstance(benchmark, Adapter) else resolve(benchmark)), None


@contextmanager
def _executor(executor: str | Executor, workers: int | None, timeout: float, address: str | None) -> Any:
    """A named executor is made here and closed after; a given one is the caller's to close."""
    if not isinstance(executor, str):
        yield executor
        return
    made = executor_mod.make(executor, workers, timeout, address=address)
    try:
        yield made
    finally:
        made.close()


def earlier(directory: str | Path, benchmark: str, arm: Arm) -> diff_mod.Audited:
    """An earlier audit to compare a run with (`--against`), read before the run so that one of another
    benchmark or arm is refused before anything is written."""
    m, rows = Store(Path(directory)).finished()
    if m.benchmark != benchmark:
        raise AuditError(f"--against {directory} is an audit of {m.benchmark!r}, not of {benchmark!r}")
    if m.arm != arm.name:
        raise AuditError(f"--against {directory} is a {arms.of(m).title}, not a {arm.title}")
    return diff_mod.Audited(m, rows, str(directory))


def summarize(
    m: Manifest,
    rows: Mapping[str, CellResult],
    store: Store,
    c: float = rewards.DEFAULT_C,
    each: manifest_mod.Each = manifest_mod.serially,
    compared: diff_mod.Audited | None = None,
) -> Summary | Census:
    """Write summary.md/json, report.html (and, for the fault arm, rewards.json) for the manifest's arm.
    `each` draws the report's figures (most of its time): on an executor's cores with `OnCores`. With `compared`
    (an earlier audit), report.html has a section on the findings this run opened and closed against it."""
    result: Summary | Census = arms.of(m).write(m, rows, store, c)
    d = None if compared is None else diff_mod.compare(compared, diff_mod.Audited(m, rows, str(store.directory)))
    report_html.write(store, m, rows, result, each, d)
    return result


def _one_arm(
    bench: Adapter,
    out: str | Path,
    arm: Arm,
    tasks: Sequence[str],
    families: Sequence[str],
    runner: Executor,
    progress: Progress | None,
    source: Source | None,
    compared: str | Path | None = None,
    aim: str | None = None,
) -> Summary | Census:
    other = None if compared is None else earlier(compared, bench.name, arm)
    store = Store(Path(out))
    store.check_usable()
    with store.lock():
        m, rows = pipeline.run(bench, store, arm, tasks, families, runner, progress, source, aim)
        return summarize(m, rows, store, each=OnCores(runner), compared=other)


def audit(
    benchmark: Bench,
    out: str | Path,
    *,
    version: str | None = None,
    options: Mapping[str, Any] | None = None,
    suites: Sequence[str] = (),
    tasks: Sequence[str] = (),
    families: Sequence[str] = (),
    kinds: Sequence[str] = (),
    executor: str | Executor = "inprocess",
    workers: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    address: str | None = None,
    progress: Progress | None = None,
    source: Source | None = None,
    against: str | Path | None = None,
    aim: str | None = None,
) -> Summary:
    """Audit `benchmark`'s verifiers with the fault grammar into `out` (`verimut audit`).

    `suites`, `tasks`, `kinds` and `families` narrow what is audited (default: every task, every family of the
    benchmark's grammar). `source` says how a worker that does not fork loads an adapter given as an object
    (Ray); a benchmark given by name needs none. `against`: an earlier audit of the same benchmark (its directory),
    which report.html is compared with (`verimut diff`). `aim` ("blind-spot" or "verifier", `--aim`): the
    out-of-scope search plants one write per confirmed blind spot (or per verifier) and reports the others as
    proven unchecked by the read map (docs/read-sets.md); nothing changes where the adapter cannot confirm one.
    """
    _typed(
        {"out": out, "against": against},
        {"suites": suites, "tasks": tasks, "families": families, "kinds": kinds},
        {"workers": workers, "timeout": timeout},
    )
    if aim is not None and aim not in AIMS:
        raise AuditError(f"aim must be None or one of {', '.join(AIMS)}, not {aim!r}")
    bench, named = _bench(benchmark, version, options)
    chosen = pipeline.select_kinds(bench, pipeline.select_tasks(bench.tasks(), suites, tasks), kinds)
    fams = pipeline.select_families(families, bench.grammar)
    with _executor(executor, workers, timeout, address) as runner:
        result = _one_arm(bench, out, FAULT, chosen, fams, runner, progress, source or named, against, aim)
    assert isinstance(result, Summary)
    return result


def swap(
    benchmark: Bench,
    out: str | Path,
    *,
    version: str | None = None,
    options: Mapping[str, Any] | None = None,
    suites: Sequence[str] = (),
    tasks: Sequence[str] = (),
    executor: str | Executor = "inprocess",
    workers: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    address: str | None = None,
    progress: Progress | None = None,
    source: Source | None = None,
    against: str | Path | None = None,
) -> Census:
    """The intent-swap census of the chosen user tasks into `out` (`verimut swap`; pairs are formed per suite).

    Only "user" tasks are paired: another kind's verifier (AgentDojo's `security`) asks whether an
    attack succeeded, not whether a user's request was done, so a swapped pass means nothing.
    """
    _typed(
        {"out": out, "against": against}, {"suites": suites, "tasks": tasks}, {"workers": workers, "timeout": timeout}
    )
    bench, named = _bench(benchmark, version, options)
    if bench.verify_as is None:
        raise AuditError(
            f"{bench.name} cannot run the intent-swap census: its adapter has no verify_as(task, episode, run)"
        )
    if not suites and not tasks:
        suites = bench.swap_suites  # the adapter's default (WorkArena: once-after-submit only)
    chosen = pipeline.select_tasks(bench.tasks(), suites, tasks)
    if bench.kind is not None:
        users = [t for t in chosen if kind_of(bench, t) == USER]
        if not users:
            raise AuditError("no task selected: the intent-swap census pairs user tasks only")
        chosen = users
    with _executor(executor, workers, timeout, address) as runner:
        result = _one_arm(bench, out, SWAP_ARM, chosen, (), runner, progress, source or named, against)
    assert isinstance(result, Census)
    return result


def repair(
    directory: str | Path,
    *,
    benchmark: Bench | None = None,
    census: str | Path | None = None,
    executor: str | Executor = "inprocess",
    workers: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    address: str | None = None,
) -> Report:
    """The minimal checks that reject the audit in `directory`'s confirmed false accepts (`verimut repair`).

    Writes them under `directory`/repair/ (a module, summary.md/json), regrades every cell of the audit (and of
    the swap census in `census`, whose effect-absent acceptances are targets too) with the repaired verifiers
    on `executor`, as the audit scored them, and rebuilds report.html with the before/after counts. `benchmark`:
    as given to `audit`, when it is not built in (its version is the audit's).
    """
    _typed({"directory": directory, "census": census}, {}, {"workers": workers, "timeout": timeout})
    store = Store(Path(directory))
    m = store.read_manifest()
    if benchmark is None and not adapters.known(m.benchmark):
        raise AuditError(f"{m.benchmark!r} is not built in: give the benchmark as given to `audit` (module:object)")
    given = benchmark if benchmark is not None else m.benchmark
    # By name, with the audit's options (an object given is already made, with its own).
    bench, source = _bench(given, m.version, m.options if isinstance(given, str) else None)
    with _executor(executor, workers, timeout, address) as runner, store.lock():
        swapped = None if census is None else Store(Path(census))
        report = run_repair(bench, m, store.rows(), store, swapped, executor=runner, source=source)
        report_html.rebuild(store)  # its before/after counts join the audit's page
    return report


__all__ = ["Progress", "audit", "repair", "summarize", "swap"]
