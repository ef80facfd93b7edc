"""The pytest plugin: audit a benchmark's verifiers from its own test suite.

Installed with verimut (entry point `pytest11`), it gives every test the `verimut_audit`
fixture: call it with a benchmark (a built-in name, `module:object`, or an adapter object)
and a selection of tasks and fault families; it runs the audit into a temporary directory
and returns an `Audit`. `Audit.assert_no_false_accepts()` fails the test with each
confirmed false accept's edit and evidence; `Audit.check("extra.false_accept>0 or
error>0")` fails it when a `--fail-on` expression holds (grammar: `verimut.cli.gate`). Given
`baseline="verimut-baseline.json"` (a file `verimut baseline DIR` wrote), both leave out the
findings it holds, and warn of each baselined finding that no longer occurs (so the file can shrink).

Nothing heavy is imported until a test uses the fixture: the plugin loads in every pytest
session of an environment that has verimut installed.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from verimut.core.benchmark import Benchmark
    from verimut.core.records import Cell, CellResult, Manifest
    from verimut.findings.baseline import Match
    from verimut.findings.summary import Summary


class BaselineWarning(UserWarning):
    """A baselined finding no longer occurs (fixed, or its run is gone): the baseline file can lose it."""


@dataclass(frozen=True)
class Audit:
    """A finished audit: its summary, and the manifest and ledger rows it was built from; `baseline`, the baseline
    file whose findings `check` leaves out (None: none)."""

    summary: Summary
    directory: Path
    manifest: Manifest
    rows: Mapping[str, CellResult]
    baseline: Path | None = None

    def baseline_match(self, baseline: str | Path | None = None) -> Match | None:
        """The baseline (this audit's, or the one given) held against the audit: what it holds, what no longer
        occurs. A file of another benchmark, or not a baseline, raises verimut.AuditError."""
        from verimut.cli import baseline as baseline_cli
        from verimut.findings import baseline as baseline_mod

        path = baseline if baseline is not None else self.baseline
        if path is None:
            return None
        given = baseline_cli.load(Path(path)).check(self.manifest.benchmark, self.manifest.arm)
        return baseline_mod.match(given.baseline, self.manifest, self.rows)

    @property
    def false_accepts(self) -> list[str]:
        """The cell ids of every confirmed false accept, in manifest order."""
        return [f.cell_id for f in self.summary.false_accepts]

    def _cells(self, outcome: str, allow: Iterable[str]) -> list[tuple[Cell, CellResult]]:
        allowed = set(allow)
        return [
            (c, self.rows[c.cell_id])
            for c in self.manifest.cells
            if c.cell_id in self.rows and self.rows[c.cell_id].outcome == outcome and c.cell_id not in allowed
        ]

    def check(
        self, fail_on: str = "false_accept>0", allow: Iterable[str] = (), baseline: str | Path | None = None
    ) -> None:
        """Fail the test when `fail_on` holds over the counts, leaving out the cells in `allow` and the findings
        the baseline holds (`baseline`, else the audit's own).

        The failure message lists the parts of the expression that hold, then each confirmed
        false accept (not allowed) with its edit, the run, and every record that differs. Each baselined
        finding that no longer occurs is a `BaselineWarning`, failing or not.
        """
        from verimut.cli import gate
        from verimut.core.printable import inert
        from verimut.engine.arms import FAULT
        from verimut.engine.store import SUMMARY_MD, Store
        from verimut.findings import evidence
        from verimut.findings.summary import LOWER_BOUND

        allowed = list(allow)
        unknown = [a for a in allowed if a not in {c.cell_id for c in self.manifest.cells}]
        if unknown:
            raise ValueError(f"allow names cells this audit does not have: {', '.join(unknown)}")
        found = self.baseline_match(baseline)
        if found is not None:
            for e in found.gone:
                warnings.warn(
                    inert(
                        f"verimut: the baselined {e.outcome.value} {e.cell_id} no longer occurs: remove it from the "
                        "baseline"
                    ),
                    BaselineWarning,
                    stacklevel=2,
                )
        baselined = [] if found is None else [cid for cid in found.held if cid not in allowed]
        left_out = [*allowed, *baselined]
        per_family: dict[str, Counter[str]] = {c.family: Counter() for c in self.manifest.cells}
        for cid, row in self.rows.items():
            if cid not in left_out:
                per_family[row.family][row.outcome] += 1
        counts = gate.fault_counts(per_family)
        g = gate.read(fail_on, gate.Vocabulary(FAULT, gate.scopes_of(counts)), flag="fail_on")
        holds = gate.fired(g, counts)
        if not holds:
            return
        fas = self._cells("false_accept", left_out)
        s = self.summary
        lines = [
            f"verimut: {fail_on!r} holds for {s.benchmark} {s.version}: " + "; ".join(holds),
            f"{len(fas)} confirmed false accept(s) in {s.scored} scored cells"
            + (f" ({len(allowed)} allowed cell(s) left out)" if allowed else "")
            + (f" ({len(baselined)} baselined finding(s) left out)" if baselined else ""),
            "",
        ]
        for cell, row in fas:
            head, _cell, *rest = evidence.lines(cell, row)
            lines += [f"{cell.cell_id}: {head}", *(f"  {line}" for line in rest), ""]
        lines += [f"report: {Store(self.directory).path(SUMMARY_MD)}", LOWER_BOUND]
        # The benchmark's text (task ids, values, verifier messages) shown, never acted on by the terminal.
        pytest.fail(inert("\n".join(lines)), pytrace=False)

    def assert_no_false_accepts(self, allow: Iterable[str] = (), baseline: str | Path | None = None) -> None:
        """Fail the test if the audit found a confirmed false accept (other than those in `allow` and the
        baseline's)."""
        self.check("false_accept>0", allow, baseline)


def run_audit(
    benchmark: str | Benchmark,
    out: str | Path,
    *,
    version: str | None = None,
    suites: Sequence[str] = (),
    tasks: Sequence[str] = (),
    families: Sequence[str] = (),
    executor: str = "inprocess",
    workers: int | None = None,
    timeout: float = 300.0,
    baseline: str | Path | None = None,
) -> Audit:
    """Audit `benchmark` into `out` (resuming, as the command line does) and return the result. `baseline`: a
    baseline file, read first (a bad one raises before the audit), whose findings `Audit.check` leaves out."""
    from verimut import api
    from verimut.cli import baseline as baseline_cli
    from verimut.engine.store import Store

    out = Path(out)  # a string too ("dir"): 0.4 crashed on it after the audit
    if baseline is not None:
        baseline_cli.load(Path(baseline))  # a file that is no baseline fails before the audit; its benchmark after
    # Ray's actors load the adapter by name (the pool forks, so an object does there).
    if not isinstance(benchmark, str) and executor == "ray":
        raise ValueError("give the benchmark by name (or module:object) to score it with Ray")
    summary = api.audit(
        benchmark,
        out,
        version=version,
        suites=suites,
        tasks=tasks,
        families=families,
        executor=executor,
        workers=workers,
        timeout=timeout,
    )
    store = Store(out)
    audit = Audit(summary, out, store.read_manifest(), store.rows(), None if baseline is None else Path(baseline))
    audit.baseline_match()  # a baseline of another benchmark fails here, not at the first check
    return audit


@pytest.fixture
def verimut_audit(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Audit]:
    """`verimut_audit(benchmark, tasks=..., families=...)`: run an audit, get an `Audit`.

    Takes the arguments of `verimut.cli.pytest_plugin.run_audit` except `out` (a fresh
    temporary directory unless `out=` is given).
    """

    def audit(benchmark: str | Benchmark, *, out: str | Path | None = None, **options: Any) -> Audit:
        return run_audit(benchmark, out or tmp_path_factory.mktemp("verimut"), **options)

    return audit
