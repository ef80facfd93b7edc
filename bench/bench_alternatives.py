"""Benchmark: what alternative runs and the repair's regrade cost through verimut, against bare loops.

Run from the repository root:

    .venv/bin/python bench/bench_alternatives.py                      # all four AgentDojo suites, 3 repeats
    .venv/bin/python bench/bench_alternatives.py --suite banking --repeat 5

Everything runs in one process, on one AgentDojo adapter object, after each suite's default
environment has been loaded once. Set-up, outside every timer: the default audit's manifest is
built once; the audit is scored once (`audit.score_all`, in process) and `verimut repair`'s
checks synthesized and written once, so the regrade has its module.

Each repeat then measures, in alternating order (forward on even repeats, backward on odd ones),
each after a `gc.collect()`:

- `alternatives`: the alternative-run cells (and every control) through `audit.score_all` into a
  fresh directory: replay, the oracle's check (end state and reads, `alternatives.differs`), the
  verifier, classification, the fsync'd ledger.
- `alternatives_bare`: the same cells with nothing around them (the harness's bare loop): `reset`, `execute`
  of every action (to the first that raises, as the scorer), `snapshot` before and after, `verify`. No diff, no
  read comparison, no ledger.
- `regrade`: `repair.regrade` over every graded cell of the audit (faults, side effects,
  alternatives): replay, the repaired verifier (the original verdict AND the task's checks), the
  comparison with the reference by the audit's own rule.
- `regrade_bare`: the same cells, the same bare loop: `reset`, `execute`, `snapshot`, `verify` (the original
  verifier only).

The ratios `alternatives / alternatives_bare` and `regrade / regrade_bare` are taken inside each
repeat (the machine is shared and noisy); the report gives their min and median. stdout gets a
markdown table; every figure goes to the JSON file (default bench/out/alternatives-latest.json).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import verimut.repair as repair  # noqa: PLR0402  (the package; `verimut.repair.repair` the attribute is the API function)
from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline
from verimut.engine.store import Store
from verimut.executors.inprocess import InProcess
from verimut.grammar.faults import spec_of

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h

DEFAULT_JSON = h.OUT / "alternatives-latest.json"


def main(argv: Sequence[str] | None = None) -> int:
    args = h.arguments(__doc__ or "", DEFAULT_JSON, argv, repeat=3)
    info = h.machine("agentdojo")
    bench, _ = h.load_agentdojo(args.suite)
    tasks = pipeline.select_tasks(bench.tasks(), args.suite)
    print("set-up: the manifest, one scoring, the repair's checks ...", file=sys.stderr, flush=True)
    m = manifest_mod.build(bench, tasks, pipeline.select_families())
    alt_m = h.only(m, [c for c in m.cells if c.run is not None and (c.is_control or spec_of(c.family).is_alternative)])
    _, rows = h.score(bench, m)
    with tempfile.TemporaryDirectory(prefix="verimut-bench-alt-repair-") as tmp:
        store = Store(Path(tmp))
        store.write_manifest(m)
        module = repair.load_module(Path(repair.run(bench, m, rows, store).module))  # synthesis and a first regrade
        checks = module.CHECKS  # the checks as data: the regrade grades with them, in this process (as before)
        graded = [c for c in m.cells if c.run is not None and (r := rows.get(c.cell_id)) and r.verdict is not None]

        runs = h.alternate(
            args.repeat,
            [
                ("alternatives", lambda: h.score(bench, alt_m)[0]),
                ("alternatives_bare", lambda: h.bare(bench, alt_m.cells, snapshots=True, stop_at_error=True).seconds),
                ("regrade", lambda: h.seconds(lambda: repair.regrade(bench, m, rows, checks, InProcess()))),
                ("regrade_bare", lambda: h.bare(bench, graded, snapshots=True, stop_at_error=True).seconds),
            ],
        )
    alternatives = h.ratios(runs, ["alternatives"], ["alternatives_bare"])
    regrades = h.ratios(runs, ["regrade"], ["regrade_bare"])
    n_alt = sum(spec_of(c.family).is_alternative for c in alt_m.cells)
    fig = {
        "alternative_cells": n_alt,
        "controls": len(alt_m.cells) - n_alt,
        "regraded_cells": len(graded),
        "alternatives_s": h.median(runs, "alternatives"),
        "alternatives_bare_s": h.median(runs, "alternatives_bare"),
        "ratio_alternatives_min": alternatives["min"],
        "ratio_alternatives_median": alternatives["median"],
        "regrade_s": h.median(runs, "regrade"),
        "regrade_bare_s": h.median(runs, "regrade_bare"),
        "ratio_regrade_min": regrades["min"],
        "ratio_regrade_median": regrades["median"],
    }
    rows_md = [
        ("alternative cells + controls", f"{fig['alternative_cells']} + {fig['controls']}"),
        ("alternatives through `score_all`, median (s)", f"{fig['alternatives_s']:.2f}"),
        ("the same cells, bare loop (reset, execute, verify), median (s)", f"{fig['alternatives_bare_s']:.2f}"),
        (
            "**alternatives / bare**, min / median",
            f"**{fig['ratio_alternatives_min']:.2f}x / {fig['ratio_alternatives_median']:.2f}x**",
        ),
        ("cells regraded by `repair.regrade`", f"{fig['regraded_cells']}"),
        ("regrade with the repaired verifiers, median (s)", f"{fig['regrade_s']:.2f}"),
        ("the same cells, bare loop with the original verifier, median (s)", f"{fig['regrade_bare_s']:.2f}"),
        (
            "**regrade / bare**, min / median",
            f"**{fig['ratio_regrade_min']:.2f}x / {fig['ratio_regrade_median']:.2f}x**",
        ),
    ]
    head = h.agentdojo_head(bench, info, args)
    report = {"args": vars(args) | {"json": str(args.json)}, "figures": fig, "runs": runs}
    h.finish(head, rows_md, info, args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
