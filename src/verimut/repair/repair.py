"""Repair: the minimal checks that reject an audit's confirmed false accepts, and no correct run (`run`).

In four parts: the check language as typed data (`checks`), the checks proposed from the reference run and the
false accepts (`synthesis`), every cell scored again with the repaired verifiers through the Scorer and an
executor (`regrade`), and what the repair rejects and whether it rejects any correct run, with the generated
module that wraps the original verifiers (`report`).
"""

from __future__ import annotations

from collections.abc import Mapping

from verimut.core.benchmark import Benchmark, resolve
from verimut.core.errors import AuditError
from verimut.core.records import CellResult, Manifest, Outcome
from verimut.engine import arms
from verimut.engine.executor import Executor
from verimut.engine.scoring import Source
from verimut.engine.store import Store
from verimut.executors.inprocess import InProcess
from verimut.findings import read_map
from verimut.grammar.faults import spec_of
from verimut.repair.checks import answer_of, write_calls
from verimut.repair.regrade import regrade, regrade_swap
from verimut.repair.report import MODULE, Report, markdown, module_source, report
from verimut.repair.synthesis import ends_of, synthesize


def swap_census(m: Manifest, swap: Store) -> tuple[Manifest, dict[str, CellResult]]:
    """The swap census at `swap`, checked to be one of the audit's benchmark and version (else one line)."""
    sm = swap.read_manifest()
    if arms.of(sm).edits:
        raise AuditError(
            f"--swap {swap} is not a swap census (it holds a {sm.arm}-arm audit): give `verimut swap`'s --out"
        )
    if (sm.benchmark, sm.version) != (m.benchmark, m.version):
        raise AuditError(
            f"--swap {swap} is a census of {sm.benchmark} {sm.version}; the audit is of {m.benchmark} {m.version}"
        )
    for t in set(sm.tasks) & set(m.tasks):
        if sm.tasks[t].start_digest != m.tasks[t].start_digest or sm.tasks[t].effect != m.tasks[t].effect:
            raise AuditError(f"--swap {swap} and the audit disagree on task {t}'s start or reference effect")
    return sm, dict(swap.rows())


def run(
    bench: Benchmark,
    m: Manifest,
    rows: Mapping[str, CellResult],
    store: Store,
    swap: Store | None = None,
    *,
    executor: Executor | None = None,
    source: Source | None = None,
) -> Report:
    """Synthesize, write the module, regrade every cell on `executor` (default: in this process), write the report
    under the audit's repair/. `source`: how a worker that does not fork loads the benchmark (Ray).

    With `swap` (a swap census of the same benchmark), its effect-absent acceptances of the audit's
    tasks are targets too, and are regraded with the repaired verifiers.
    """
    if not arms.of(m).edits:
        raise AuditError(f"{store} holds a swap census; repair works on a fault-arm audit (verimut audit)")
    adapter = resolve(bench)
    sm, srows = swap_census(m, swap) if swap is not None else (None, {})
    every_absent = [r for r in srows.values() if r.outcome == Outcome.ACCEPTED_EFFECT_ABSENT]
    absent = [r for r in every_absent if r.task in m.tasks]  # a task with no correct run here to check against
    fas = [r for r in rows.values() if r.outcome == Outcome.FALSE_ACCEPT]
    tasks = {r.task for r in [*fas, *absent]}
    # Every correct run of those tasks: a check one of them fails is dropped. An alternative run the
    # original verifier fails is correct too (the oracle confirmed it): the repair must not add to it.
    passing = [
        r
        for r in rows.values()
        if r.task in tasks
        and (r.outcome.is_correct_pass or (r.outcome == Outcome.FALSE_REJECT and spec_of(r.family).is_alternative))
    ]
    ends = ends_of(adapter, m, [r.cell_id for r in [*fas, *passing]])
    if sm is not None:
        ends |= ends_of(adapter, sm, [r.cell_id for r in absent])
    cells = {c.cell_id: c for c in m.cells}
    answers = {
        r.cell_id: answer_of(adapter, run) for r in [*fas, *passing] if (run := cells[r.cell_id].run) is not None
    }
    calls = {
        r.cell_id: write_calls(adapter, run) for r in [*fas, *passing] if (run := cells[r.cell_id].run) is not None
    }
    reference_calls = {t: write_calls(adapter, m.tasks[t].reference) for t in tasks}
    # What each verifier read, measured (None: the adapter recorded no reads): frame checks go on what it does not.
    measured = read_map.build(m, rows)
    maps = measured.verifiers if measured is not None else None
    repairs = synthesize(m, ends, [*fas, *absent], passing, answers, calls, reference_calls, maps)
    path = store.write_repair(MODULE, module_source(m, repairs))
    checks = {f.task: f.checks for f in repairs if f.checks}
    executor = executor or InProcess()
    graded = regrade(adapter, m, rows, checks, executor, source)
    if sm is not None:
        graded += regrade_swap(adapter, sm, {r.cell_id: r for r in absent}, checks, m.ignore, executor, source)
    r = report(m, repairs, graded, path, None if swap is None else swap.directory, measured is not None)
    r.swap_outside_audit = len(every_absent) - len(absent)
    store.write_repair_summary(r, markdown(r))
    return r
