"""The pytest plugin: audit a benchmark's verifiers from its own test suite.

Installed with verimut (entry point `pytest11`), it gives every test the `verimut_audit`
fixture: call it with a benchmark (a built-in name, `module:object`, or an adapter object)
and a selection of tasks and fault families; it runs the audit into a temporary directory
and returns an `Audit`. `Audit.assert_no_false_accepts()` fails the test with each
confirmed false accept's edit and evidence; `Audit.check("extra.false_accept>0 or
error>0")` fails it when a `--fail-on` expression holds (grammar: `verimut.cli.gate`).

Nothing heavy is imported until a test uses the fixture: the plugin loads in every pytest
session of an environment that has verimut installed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from verimut.core.benchmark import Benchmark
    from verimut.core.records import Cell, CellResult, Manifest
    from verimut.findings.summary import Summary


@dataclass(frozen=True)
class Audit:
    """A finished audit: its summary, and the manifest and ledger rows it was built from."""

    summary: Summary
    directory: Path
    manifest: Manifest
    rows: dict[str, CellResult]

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

    def check(self, fail_on: str = "false_accept>0", allow: Iterable[str] = ()) -> None:
        """Fail the test when `fail_on` holds over the counts, leaving out the cells in `allow`.

        The failure message lists the parts of the expression that hold, then each confirmed
        false accept (not allowed) with its edit, the run, and every record that differs.
        """
        from verimut.cli import gate
        from verimut.engine.arms import FAULT
        from verimut.engine.store import SUMMARY_MD, Store
        from verimut.findings import evidence
        from verimut.findings.summary import LOWER_BOUND

        allowed = list(allow)
        unknown = [a for a in allowed if a not in {c.cell_id for c in self.manifest.cells}]
        if unknown:
            raise ValueError(f"allow names cells this audit does not have: {', '.join(unknown)}")
        per_family: dict[str, Counter[str]] = {c.family: Counter() for c in self.manifest.cells}
        for cid, row in self.rows.items():
            if cid not in allowed:
                per_family[row.family][row.outcome] += 1
        counts = gate.fault_counts(per_family)
        g = gate.read(fail_on, gate.Vocabulary(FAULT, gate.scopes_of(counts)), flag="fail_on")
        held = gate.fired(g, counts)
        if not held:
            return
        found = self._cells("false_accept", allowed)
        s = self.summary
        lines = [
            f"verimut: {fail_on!r} holds for {s.benchmark} {s.version}: " + "; ".join(held),
            f"{len(found)} confirmed false accept(s) in {s.scored} scored cells"
            + (f" ({len(allowed)} allowed cell(s) left out)" if allowed else ""),
            "",
        ]
        for cell, row in found:
            head, _cell, *rest = evidence.lines(cell, row)
            lines += [f"{cell.cell_id}: {head}", *(f"  {line}" for line in rest), ""]
        lines += [f"report: {Store(self.directory).path(SUMMARY_MD)}", LOWER_BOUND]
        pytest.fail("\n".join(lines), pytrace=False)

    def assert_no_false_accepts(self, allow: Iterable[str] = ()) -> None:
        """Fail the test if the audit found a confirmed false accept (other than those in `allow`)."""
        self.check("false_accept>0", allow)


def run_audit(
    benchmark: str | Benchmark,
    out: Path,
    *,
    version: str | None = None,
    suites: Sequence[str] = (),
    tasks: Sequence[str] = (),
    families: Sequence[str] = (),
    executor: str = "inprocess",
    workers: int | None = None,
    timeout: float = 300.0,
) -> Audit:
    """Audit `benchmark` into `out` (resuming, as the command line does) and return the result."""
    from verimut import api
    from verimut.engine.store import Store

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
    return Audit(summary, out, store.read_manifest(), store.rows())


@pytest.fixture
def verimut_audit(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Audit]:
    """`verimut_audit(benchmark, tasks=..., families=...)`: run an audit, get an `Audit`.

    Takes the arguments of `verimut.cli.pytest_plugin.run_audit` except `out` (a fresh
    temporary directory unless `out=` is given).
    """

    def audit(benchmark: str | Benchmark, *, out: Path | None = None, **options: Any) -> Audit:
        return run_audit(benchmark, out or tmp_path_factory.mktemp("verimut"), **options)

    return audit
