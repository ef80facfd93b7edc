"""Benchmark: what the answer families cost per cell through verimut, against a bare loop of the same verifier calls.

Run from the repository root:

    .venv/bin/python bench/bench_answers.py                      # all four AgentDojo suites, 5 repeats
    .venv/bin/python bench/bench_answers.py --suite travel --repeat 3

Everything runs in one process, on one AgentDojo adapter object. Set-up, outside every timer: the default
audit's manifest is built once, and its answer cells (answer-drop, answer-wrong, answer-superstring,
answer-hedge, null-run, alt-answer: every one with a run of its own) and every control are kept; the suites'
default environments are loaded once, and one warm-up pass of the bare loop gives the verdicts to agree with.

Each repeat then measures, in alternating order (forward on even repeats, backward on odd ones), each after a
`gc.collect()`:

- `answers`: those cells through `pipeline.score_all` into a fresh directory, as `verimut audit` scores them in
  process: replay (an answer cell keeps the reference's actions, so it forks the reference's kept end and
  executes nothing; the null run starts from `reset`), the oracle's check (the end state, and the answer's by
  construction, `answers.confirm`), the verifier, classification, the fsync'd ledger;
- `answers_replayed`: the same with fork-state scoring off (the adapter with `fork=None`): every cell replayed
  from `reset`, as the bare loop does, so `answers_replayed / bare` is the pipeline's own overhead (snapshots,
  diff, the answer check, classification, ledger) with no saving from forks;
- `bare`: the same cells with no verimut around them, on the AgentDojo adapter itself (not the guarded
  `Adapter`): `reset`, `execute` of every action, then AgentDojo's verifier (`verify`: the task's `utility`, or
  `security` for an injection task). No snapshot, no diff, no answer check, no ledger.

The ratios are taken inside each repeat (the machine is shared and noisy); the report gives their min and
median, and the milliseconds per cell. The bare loop's verdicts are compared with the ledger's; a difference is
printed as a WARNING. stdout gets a markdown table; every figure goes to the JSON file (default
bench/out/answers-latest.json).
"""

from __future__ import annotations

import dataclasses
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from verimut.engine import manifest as manifest_mod
from verimut.engine import pipeline
from verimut.grammar.faults import spec_of

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h

DEFAULT_JSON = h.OUT / "answers-latest.json"


def is_answer_cell(family: str) -> bool:
    spec = spec_of(family)
    return spec.needs_answer_channel or spec.null_run


def main(argv: Sequence[str] | None = None) -> int:
    args = h.arguments(__doc__ or "", DEFAULT_JSON, argv, repeat=5)
    info = h.machine("agentdojo")
    bench, _ = h.load_agentdojo(args.suite)
    no_fork = dataclasses.replace(bench, fork=None)
    tasks = pipeline.select_tasks(bench.tasks(), args.suite)
    print("set-up: the manifest ...", file=sys.stderr, flush=True)
    m = manifest_mod.build(bench, tasks, pipeline.select_families())
    kept = [
        c for c in m.cells if c.run is not None and c.same_run_as is None and (c.is_control or is_answer_cell(c.family))
    ]
    answer_m = h.only(m, kept)
    families = Counter(c.family for c in kept)
    # AgentDojo's own adapter (not the guarded one) in the bare loop; a first pass gives the verdicts to agree with.
    expected = h.bare(bench.bench, kept, stop_at_error=True).verdicts
    disagree: set[str] = set()

    def bare() -> float:
        done = h.bare(bench.bench, kept, stop_at_error=True)
        disagree.update(c for c, v in done.verdicts.items() if v != expected[c])
        return done.seconds

    def answers(adapter: object) -> float:
        took, rows = h.score(adapter, answer_m)
        disagree.update(c for c, row in rows.items() if row.verdict is not None and row.verdict != expected[c])
        return took

    runs = h.alternate(
        args.repeat,
        [("answers", lambda: answers(bench)), ("answers_replayed", lambda: answers(no_fork)), ("bare", bare)],
    )
    for c in sorted(disagree):
        print(f"WARNING: {c}: the ledger's verdict is not the bare loop's", file=sys.stderr)

    ratio, replayed = h.ratios(runs, ["answers"], ["bare"]), h.ratios(runs, ["answers_replayed"], ["bare"])
    cells = len(kept)
    n_answer = sum(n for f, n in families.items() if is_answer_cell(f))
    fig = {
        "answer_cells": n_answer,
        "controls": cells - n_answer,
        "cells_by_family": dict(sorted(families.items())),
        "answers_s": h.median(runs, "answers"),
        "answers_replayed_s": h.median(runs, "answers_replayed"),
        "bare_s": h.median(runs, "bare"),
        "per_cell_ms": 1000 * h.median(runs, "answers") / cells,
        "per_cell_replayed_ms": 1000 * h.median(runs, "answers_replayed") / cells,
        "per_cell_bare_ms": 1000 * h.median(runs, "bare") / cells,
        "ratio_min": ratio["min"],
        "ratio_median": ratio["median"],
        "ratio_replayed_min": replayed["min"],
        "ratio_replayed_median": replayed["median"],
        "verdicts_disagreeing": sorted(disagree),
    }
    by_family = ", ".join(f"{f} {n}" for f, n in sorted(families.items()))
    rows_md = [
        ("cells (controls included)", f"{cells}: {by_family}"),
        ("through `score_all`, median (s)", f"{fig['answers_s']:.2f} ({fig['per_cell_ms']:.2f} ms a cell)"),
        (
            "through `score_all`, forks off (every cell from `reset`), median (s)",
            f"{fig['answers_replayed_s']:.2f} ({fig['per_cell_replayed_ms']:.2f} ms a cell)",
        ),
        (
            "the same cells, bare loop (reset, execute, AgentDojo's verifier), median (s)",
            f"{fig['bare_s']:.2f} ({fig['per_cell_bare_ms']:.2f} ms a cell)",
        ),
        ("**answers / bare**, min / median", f"**{fig['ratio_min']:.2f}x / {fig['ratio_median']:.2f}x**"),
        ("forks off / bare, min / median", f"{fig['ratio_replayed_min']:.2f}x / {fig['ratio_replayed_median']:.2f}x"),
        ("verdicts that differ from the bare loop's", str(len(disagree))),
    ]
    head = h.agentdojo_head(bench, info, args)
    h.finish(
        head, rows_md, info, args.json, {"args": vars(args) | {"json": str(args.json)}, "figures": fig, "runs": runs}
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
